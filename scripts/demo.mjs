#!/usr/bin/env node
// `make demo`: the whole Strata story on real data, through the unmodified LanceDB Node client
// (@lancedb/lancedb 0.31.0, remote mode with hostOverride) against `strata serve`.
//
//   node scripts/demo.mjs --strata build/release/strata [--queries 10000] [--keep]
//
//  1. Starts `strata serve` on a free loopback port and a temporary data directory.
//  2. Creates table fashion_mnist (id int64 primary key, label int32, vector f32 x 784) and its
//     vector index (IVF_HNSW_SQ requested, served by an HNSW graph) BEFORE loading: Strata
//     maintains the index while writing, so the rows are searchable with the index as soon as
//     each add() is acknowledged.
//  3. Loads the 60,000 Fashion-MNIST training images (Debian dataset-fashion-mnist) in batches
//     of 1,000 with a progress bar.
//  4. Runs the 10,000 test images as k=10 queries (4 in flight): recall@10 against the exact
//     ground truth of the C++ knn_ground_truth tool (next to the strata binary), queries/s.
//  5. Filtered search `label = 3` (prefilter): recall@10 against the exact filtered top-10, and
//     every returned row has label 3.
//  6. Loads the 117,659 WordNet synsets (Debian wordnet-base; synset id such as "n02084071" as
//     primary key), builds an FTS index on the gloss and prints example searches with scores.
//  7. Upserts and deletes (WordNet and Fashion-MNIST), each visible in the very next query.
//  8. Calls flush/ 5 times while a second client keeps inserting 1,000-row batches.
//  9. Shows mem_wal/describe/ (generations, SSTables, in-memory index set).
// 10. Restarts the server gracefully and checks every acknowledged row is still there.
// Ends with a summary table. Exits 1 if any check fails (recall@10 < 0.9, a count mismatch, a
// change not visible in the next query, a filtered row with the wrong label), 2 on bad flags or
// missing inputs (binary, dataset, ground-truth tool).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  FASHION_DIM,
  FASHION_DIR,
  REPO,
  WORDNET_DIR,
  fashionBatch,
  fashionSchema,
  groundTruth,
  loadClients,
  loadFashionMnist,
  loadWordnet,
  recallAtK,
} from "./lib/datasets.mjs";
import { Progress } from "./lib/progress.mjs";
import { formatPairs, formatTable } from "./lib/table_print.mjs";

const K = 10;
const DB = "demo";
const FILTER_LABEL = 3;
const MIN_RECALL = 0.9;
const FLUSHES = 5;
const FASHION_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
  "Bag", "Ankle boot"];
const FTS_EXAMPLES = ["domesticated animal", "musical instrument with strings", "a river in Europe",
  "small sweet fruit", "computer program"];

const USAGE = `usage: node scripts/demo.mjs --strata PATH [options]

  --strata PATH      strata binary (default: STRATA_BIN or build/release/strata)
  --queries N        Fashion-MNIST test queries at k=10, 1..10000 (default 10000)
  --filtered N       queries of the filtered search label = ${FILTER_LABEL} (default min(1000, --queries))
  --concurrency N    queries in flight (default 4)
  --batch N          rows per add() while loading Fashion-MNIST (default 1000)
  --dataset DIR      Fashion-MNIST IDX files (default ${FASHION_DIR})
  --wordnet DIR      WordNet data.{noun,verb,adj,adv} (default ${WORDNET_DIR})
  --gt-tool PATH     exact ground-truth tool (default: knn_ground_truth next to the strata binary)
  --gt-cache DIR     ground-truth cache (default: datasets/ next to the strata binary)
  --keep             keep the server's data directory (its path is printed)
  -h, --help         this text`;

function parseArgs(argv) {
  const opts = {
    strata: process.env.STRATA_BIN || path.join(REPO, "build/release/strata"),
    queries: 10000,
    filtered: null,
    concurrency: 4,
    batch: 1000,
    dataset: FASHION_DIR,
    wordnet: WORDNET_DIR,
    gtTool: null,
    gtCache: null,
    keep: false,
  };
  const int = (a, v, lo, hi) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`${a} must be an integer in [${lo}, ${hi}], got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--strata") opts.strata = val();
    else if (a === "--queries") opts.queries = int(a, val(), 1, 10000);
    else if (a === "--filtered") opts.filtered = int(a, val(), 1, 10000);
    else if (a === "--concurrency") opts.concurrency = int(a, val(), 1, 64);
    else if (a === "--batch") opts.batch = int(a, val(), 1, 60000);
    else if (a === "--dataset") opts.dataset = val();
    else if (a === "--wordnet") opts.wordnet = val();
    else if (a === "--gt-tool") opts.gtTool = val();
    else if (a === "--gt-cache") opts.gtCache = val();
    else if (a === "--keep") opts.keep = true;
    else if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  opts.strata = path.resolve(opts.strata);
  if (!fs.existsSync(opts.strata)) throw new Error(`--strata: no strata binary at ${opts.strata} (run make build)`);
  const binDir = path.dirname(opts.strata);
  opts.gtTool = path.resolve(opts.gtTool || path.join(binDir, "knn_ground_truth"));
  opts.gtCache = path.resolve(opts.gtCache || path.join(binDir, "datasets"));
  if (opts.filtered === null) opts.filtered = Math.min(1000, opts.queries);
  return opts;
}

// ---- output helpers -------------------------------------------------------------------------

const fmt = (n, digits = 0) =>
  Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (t) => `${fmt(t, t < 10 ? 1 : 0)} ms`;
const secs = (t) => `${fmt(t / 1000, 1)} s`;

function section(n, title) {
  const head = n === "" ? title : `${n}. ${title}`;
  console.log(`\n== ${head} ${"=".repeat(Math.max(3, 92 - head.length))}`);
}

const checks = [];
/** Records a check and prints it: "  ok    ..." or "  FAIL  ...". */
function check(what, ok, detail = "") {
  checks.push({ what, ok });
  console.log(`  ${ok ? "ok  " : "FAIL"}  ${what}${detail ? ` (${detail})` : ""}`);
  return ok;
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function snippet(text, n = 70) {
  return text.length <= n ? text : `${text.slice(0, n - 3)}...`;
}

/** Runs `fn(i)` for i in [0, n) with at most `limit` calls in flight; returns the results in order. */
async function pool(n, limit, fn) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

function queryVector(split, i) {
  return Float32Array.from(split.pixels.subarray(i * FASHION_DIM, (i + 1) * FASHION_DIM));
}

// ---- the demo -------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const tStart = performance.now();
  const { lancedb, arrow } = loadClients();
  const { StrataServer } = await import(path.join(REPO, "tests/e2e/lib/server.mjs"));
  const summary = {};
  const load = os.loadavg().map((x) => x.toFixed(2)).join(", ");
  console.log(`Strata demo: ${opts.strata}`);
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average ${load}; ` +
    `node ${process.version}`);

  // Data and exact ground truth first: a missing tool or dataset fails before anything starts.
  if (!fs.existsSync(path.join(opts.wordnet, "data.noun"))) {
    throw new Error(`WordNet not found: ${opts.wordnet}/data.noun (Debian wordnet-base; run ` +
      `scripts/install-deps or pass --wordnet DIR)`);
  }
  let t = performance.now();
  const data = loadFashionMnist(opts.dataset);
  const { train, test } = data;
  console.log(`Fashion-MNIST: ${fmt(train.n)} training + ${fmt(test.n)} test images, ${FASHION_DIM}-d, ` +
    `pixels as float32 0..255 (read in ${ms(performance.now() - t)})`);
  t = performance.now();
  const gtArgs = { tool: opts.gtTool, cacheDir: opts.gtCache, train: train.n, k: K, dataset: opts.dataset };
  const haveGt = (q, label) =>
    fs.existsSync(path.join(opts.gtCache, `fmnist-gt-${train.n}-${q}-${K}-${label ?? "all"}.json`));
  const cached = haveGt(opts.queries, null) && haveGt(opts.filtered, FILTER_LABEL);
  if (!cached && !fs.existsSync(opts.gtTool)) {
    throw new Error(`exact ground truth: no ${opts.gtTool} (built with strata; pass --gt-tool) ` +
      `and no cached files in ${opts.gtCache}`);
  }
  const gt = groundTruth({ ...gtArgs, queries: opts.queries });
  const gtFiltered = groundTruth({ ...gtArgs, queries: opts.filtered, label: FILTER_LABEL });
  console.log(`exact ground truth (k=${K}; ${opts.queries} queries, and ${opts.filtered} with label = ` +
    `${FILTER_LABEL}): ${cached ? "cached" : `computed by ${path.basename(opts.gtTool)}`} in ${opts.gtCache} ` +
    `(${ms(performance.now() - t)})`);

  const server = new StrataServer({ bin: opts.strata, startTimeoutMs: 60000, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "strata-demo-")) });
  // Ctrl-C: server.mjs kills the server and exits before the `finally` below runs, so the data
  // directory is also removed on exit (server.mjs SIGKILLs the server in its own exit handler).
  let removed = false;
  process.on("exit", () => {
    if (!opts.keep && !removed) fs.rmSync(server.dataDir, { recursive: true, force: true });
  });
  let failed = null;
  try {
    // ---------------------------------------------------------------------------------------
    section(1, "strata serve + LanceDB client (remote mode)");
    t = performance.now();
    await server.start();
    console.log(`  ${path.basename(server.bin)} serve --data ${server.dataDir} --port 0 -> ${server.url} ` +
      `(listening after ${ms(performance.now() - t)})`);
    const connect = () => lancedb.connect(`db://${DB}`, { apiKey: "demo", hostOverride: server.url });
    const db = await connect();
    const http = async (table, route, body) => {
      const res = await fetch(`${server.url}/v1/table/${table}/${route}`, {
        method: "POST",
        headers: { "x-lancedb-database": DB, "x-api-key": "demo", "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    // createTable(name, rows, {schema}) in the 0.31 client drops field metadata (the primary
    // key); createEmptyTable keeps it.
    const schema = fashionSchema(arrow, { primaryKey: true });
    const fashion = await db.createEmptyTable("fashion_mnist", schema);
    console.log(`  createEmptyTable("fashion_mnist"): id int64 (primary key), label int32, ` +
      `vector fixed_size_list<float32, ${FASHION_DIM}>`);

    // ---------------------------------------------------------------------------------------
    section(2, "vector index, created before loading (maintained while writing)");
    t = performance.now();
    await fashion.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "l2" }) });
    const indexCreateMs = performance.now() - t;
    console.log(`  createIndex("vector", Index.hnswSq({distanceType: "l2"})): ${ms(indexCreateMs)} ` +
      `(IVF_HNSW_SQ requested; Strata serves it with an HNSW graph, m=16, ef_construction=100, ` +
      `in every MemTable and SSTable)`);
    for (const ix of await fashion.listIndices()) {
      console.log(`  listIndices: ${ix.name} ${ix.indexType} on [${ix.columns.join(", ")}]`);
    }

    // ---------------------------------------------------------------------------------------
    section(3, `load ${fmt(train.n)} Fashion-MNIST training images (batches of ${fmt(opts.batch)})`);
    const bar = new Progress("add", train.n);
    t = performance.now();
    for (let start = 0; start < train.n; start += opts.batch) {
      const end = Math.min(train.n, start + opts.batch);
      await fashion.add(fashionBatch(arrow, schema, train, start, end));
      bar.update(end);
    }
    const loadMs = bar.finish() * 1000;
    let fashionRows = train.n; // acknowledged rows, checked after the restart
    summary.ingest = train.n / (loadMs / 1000);
    console.log(`  ${fmt(train.n)} rows in ${secs(loadMs)} = ${fmt(summary.ingest)} rows/s ` +
      `(each add() durable in the WAL and indexed before it returns)`);
    t = performance.now();
    await fashion.waitForIndex(["vector_idx"], 300);
    const searchableMs = performance.now() - t;
    const st = await fashion.indexStats("vector_idx");
    console.log(`  waitForIndex(["vector_idx"]): ${ms(searchableMs)}; indexStats: ${JSON.stringify(st)}`);
    check("countRows = 60,000", (await fashion.countRows()) === train.n);
    check("every row indexed", st?.numIndexedRows === train.n && st?.numUnindexedRows === 0,
      `${st?.numIndexedRows} indexed, ${st?.numUnindexedRows} unindexed`);
    summary.indexTime = `create ${ms(indexCreateMs)} + maintained in load; searchable +${ms(searchableMs)}`;

    // ---------------------------------------------------------------------------------------
    section(4, `${fmt(opts.queries)} test queries, k=${K}, ${opts.concurrency} in flight`);
    const qbar = new Progress("search", opts.queries, { unit: "queries" });
    const lat = [];
    let doneQ = 0;
    t = performance.now();
    const answers = await pool(opts.queries, opts.concurrency, async (q) => {
      const t0 = performance.now();
      const rows = await fashion.search(queryVector(test, q)).distanceType("l2").limit(K).select(["id"]).toArray();
      lat.push(performance.now() - t0);
      if (++doneQ % 100 === 0 || doneQ === opts.queries) qbar.update(doneQ);
      return rows.map((r) => Number(r.id));
    });
    const queryMs = qbar.finish() * 1000;
    let recallSum = 0;
    let short = 0;
    for (let q = 0; q < opts.queries; q++) {
      if (answers[q].length !== K) short++;
      recallSum += recallAtK(answers[q], gt.ids[q], gt.dist[q], K, data, q);
    }
    summary.recall = recallSum / opts.queries;
    summary.qps = opts.queries / (queryMs / 1000);
    console.log(`  recall@10 = ${summary.recall.toFixed(4)} against the exact top-10 ` +
      `(ties at the 10th distance count as hits)`);
    console.log(`  ${fmt(summary.qps)} queries/s; latency p50 ${ms(percentile(lat, 50))}, ` +
      `p99 ${ms(percentile(lat, 99))} (HTTP + Arrow IPC, default ef = max(k, 64))`);
    check(`recall@10 >= ${MIN_RECALL}`, summary.recall >= MIN_RECALL, summary.recall.toFixed(4));
    check("every answer has 10 rows", short === 0, `${short} short`);

    // ---------------------------------------------------------------------------------------
    section(5, `filtered search: where("label = ${FILTER_LABEL}") (${FASHION_NAMES[FILTER_LABEL]}), ` +
      `${fmt(opts.filtered)} queries`);
    let wrongLabel = 0;
    let fShort = 0;
    t = performance.now();
    const fAnswers = await pool(opts.filtered, opts.concurrency, async (q) => {
      const rows = await fashion.search(queryVector(test, q)).distanceType("l2").where(`label = ${FILTER_LABEL}`)
        .limit(K).select(["id", "label"]).toArray();
      for (const r of rows) if (r.label !== FILTER_LABEL) wrongLabel++;
      if (rows.length !== K) fShort++;
      return rows.map((r) => Number(r.id));
    });
    const fMs = performance.now() - t;
    let fRecall = 0;
    for (let q = 0; q < opts.filtered; q++) fRecall += recallAtK(fAnswers[q], gtFiltered.ids[q], gtFiltered.dist[q], K, data, q);
    summary.fRecall = fRecall / opts.filtered;
    summary.fQps = opts.filtered / (fMs / 1000);
    console.log(`  recall@10 = ${summary.fRecall.toFixed(4)} against the exact top-10 among the ` +
      `${fmt(train.labels.filter((l) => l === FILTER_LABEL).length)} training images with label ${FILTER_LABEL}; ` +
      `${fmt(summary.fQps)} queries/s`);
    const plan = await fashion.search(queryVector(test, 0)).distanceType("l2").where(`label = ${FILTER_LABEL}`)
      .limit(K).explainPlan();
    console.log(`  explainPlan() of one filtered query (one line per tier):`);
    for (const l of plan.trimEnd().split("\n")) console.log(`    ${l}`);
    check(`filtered recall@10 >= ${MIN_RECALL}`, summary.fRecall >= MIN_RECALL, summary.fRecall.toFixed(4));
    check(`every returned row has label ${FILTER_LABEL}`, wrongLabel === 0, `${wrongLabel} wrong`);
    check("every filtered answer has 10 rows", fShort === 0, `${fShort} short`);

    // ---------------------------------------------------------------------------------------
    t = performance.now();
    const synsets = loadWordnet(opts.wordnet);
    section(6, `WordNet: ${fmt(synsets.length)} synsets + full-text index on the gloss`);
    console.log(`  read ${opts.wordnet}/data.{noun,verb,adj,adv} in ${ms(performance.now() - t)}`);
    const wnSchema = new arrow.Schema([
      new arrow.Field("synset", new arrow.Utf8(), false, new Map([["lance-schema:unenforced-primary-key", "true"]])),
      new arrow.Field("pos", new arrow.Utf8(), false),
      new arrow.Field("words", new arrow.Utf8(), false),
      new arrow.Field("gloss", new arrow.Utf8(), false),
    ]);
    const wordnet = await db.createEmptyTable("wordnet", wnSchema);
    const wbar = new Progress("add", synsets.length);
    const WN_BATCH = 5000;
    for (let start = 0; start < synsets.length; start += WN_BATCH) {
      const end = Math.min(synsets.length, start + WN_BATCH);
      await wordnet.add(synsets.slice(start, end));
      wbar.update(end);
    }
    const wnLoadMs = wbar.finish() * 1000;
    let wordnetRows = synsets.length;
    console.log(`  ${fmt(synsets.length)} rows (synset primary key, pos, words, gloss) in ${secs(wnLoadMs)} = ` +
      `${fmt(synsets.length / (wnLoadMs / 1000))} rows/s`);
    t = performance.now();
    await wordnet.createIndex("gloss", { config: lancedb.Index.fts() });
    const ftsCreateMs = performance.now() - t;
    await wordnet.waitForIndex(["gloss_idx"], 300);
    const ftsMs = performance.now() - t;
    const fst = await wordnet.indexStats("gloss_idx");
    console.log(`  createIndex("gloss", Index.fts()): ${ms(ftsCreateMs)}, then built in the background; ` +
      `waitForIndex done after ${ms(ftsMs)}; indexStats: ${JSON.stringify(fst)}`);
    summary.fts = `${fmt(synsets.length)} rows in ${secs(wnLoadMs)}; index ${secs(ftsMs)}`;
    const fts = (q, n = 3) =>
      wordnet.query().fullTextSearch(q, { columns: ["gloss"] }).limit(n).select(["synset", "words", "gloss"]).toArray();
    for (const q of FTS_EXAMPLES) {
      t = performance.now();
      const rows = await fts(q);
      console.log(`\n  search("${q}") -> ${rows.length} rows in ${ms(performance.now() - t)}`);
      console.log(formatTable(["synset", "_score", "words", "gloss"],
        rows.map((r) => [r.synset, r._score.toFixed(2), snippet(r.words, 28), snippet(r.gloss, 60)]), { indent: "    " }));
      check(`"${q}" finds rows`, rows.length > 0);
    }

    // ---------------------------------------------------------------------------------------
    section(7, "upserts and deletes, visible in the very next query");
    const dogId = "n02084071";
    const dog = synsets.find((s) => s.synset === dogId);
    const before = await wordnet.query().where(`synset = '${dogId}'`).toArray();
    console.log(`  ${dogId} before: ${before[0]?.words} | ${snippet(before[0]?.gloss ?? "", 70)}`);
    const merged = await wordnet.mergeInsert("synset").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute([
      { synset: dogId, pos: "n", words: dog.words, gloss: `${dog.gloss}; edited by the strata demo (zyzzyvadog)` },
      { synset: "n99999999", pos: "n", words: "strata demo", gloss: "a synset inserted by the strata demo (zyzzyvanew)" },
    ]);
    console.log(`  mergeInsert("synset").whenMatchedUpdateAll().whenNotMatchedInsertAll(): ` +
      `${merged.numUpdatedRows} updated, ${merged.numInsertedRows} inserted`);
    wordnetRows += merged.numInsertedRows;
    let rows = await fts("zyzzyvadog");
    console.log(`  next query search("zyzzyvadog") -> ${rows.map((r) => `${r.synset} ${r._score.toFixed(2)}`).join(", ") || "nothing"}`);
    check("updated gloss found by the next FTS query", rows.length === 1 && rows[0].synset === dogId);
    rows = await fts("zyzzyvanew");
    console.log(`  next query search("zyzzyvanew") -> ${rows.map((r) => `${r.synset} ${r._score.toFixed(2)}`).join(", ") || "nothing"}`);
    check("inserted synset found by the next FTS query", rows.length === 1 && rows[0].synset === "n99999999");
    check("upsert replaced the row in place (one row per synset)",
      (await wordnet.countRows(`synset = '${dogId}'`)) === 1 && merged.numUpdatedRows === 1 && merged.numInsertedRows === 1);
    await wordnet.delete("synset = 'n99999999'");
    wordnetRows -= 1;
    rows = await fts("zyzzyvanew");
    console.log(`  delete("synset = 'n99999999'"); next search("zyzzyvanew") -> ${rows.length} rows`);
    check("deleted synset gone from the next FTS query", rows.length === 0);

    // A test image (not in the table) as a new row: the next vector search returns it at 0.
    const newId = 1_000_000;
    const probe = 0;
    await fashion.add(fashionBatch(arrow, schema, test, probe, probe + 1, newId - probe));
    fashionRows += 1;
    let hits = await fashion.search(queryVector(test, probe)).distanceType("l2").limit(3).select(["id", "label"]).toArray();
    console.log(`  add(test image ${probe} as id ${newId}); next search(test image ${probe}) -> ` +
      hits.map((r) => `id ${r.id} d=${fmt(r._distance)}`).join(", "));
    check("new vector is the next query's top hit at distance 0", Number(hits[0]?.id) === newId && hits[0]?._distance === 0);
    await fashion.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll()
      .execute([{ id: newId, label: 9, vector: Array.from(queryVector(test, probe)) }]);
    hits = await fashion.search(queryVector(test, probe)).distanceType("l2").limit(1).select(["id", "label"]).toArray();
    console.log(`  mergeInsert("id") label -> 9; next search -> id ${hits[0]?.id} label ${hits[0]?.label}`);
    check("upserted label visible in the next query", Number(hits[0]?.id) === newId && hits[0]?.label === 9);
    await fashion.delete(`id = ${newId}`);
    fashionRows -= 1;
    hits = await fashion.search(queryVector(test, probe)).distanceType("l2").limit(3).select(["id"]).toArray();
    console.log(`  delete("id = ${newId}"); next search -> ${hits.map((r) => `id ${r.id} d=${fmt(r._distance)}`).join(", ")}`);
    check("deleted vector gone from the next query", hits.length === 3 && hits.every((r) => Number(r.id) !== newId));
    check("countRows back to 60,000", (await fashion.countRows()) === fashionRows, `${fashionRows}`);

    // ---------------------------------------------------------------------------------------
    section(8, `flush/ x${FLUSHES} while a second client keeps inserting`);
    const writerDb = await connect();
    const writerTable = await writerDb.openTable("fashion_mnist");
    let stop = false;
    let writerRows = 0;
    let lastAckSent = -1;
    const writerErrors = [];
    let nextTest = 0;
    let nextId = 2_000_000;
    const tw = performance.now();
    const writer = (async () => {
      while (!stop) {
        const start = nextTest;
        nextTest = (nextTest + 1000) % test.n;
        const batch = fashionBatch(arrow, schema, test, start, start + 1000, nextId - start);
        nextId += 1000;
        const sent = performance.now();
        try {
          await writerTable.add(batch);
          writerRows += 1000;
          lastAckSent = sent;
        } catch (e) {
          writerErrors.push(e.message);
          if (writerErrors.length > 3) break;
        }
      }
    })();
    const flushes = [];
    let mark = performance.now();
    try {
      for (let i = 0; i < FLUSHES; i++) {
        // Wait until an insert sent after the previous flush is acknowledged, so that this flush
        // has rows to seal.
        while (lastAckSent <= mark && writerErrors.length === 0) await new Promise((r) => setTimeout(r, 5));
        const rowsBefore = writerRows;
        const t0 = performance.now();
        const r = await http("fashion_mnist", "flush/", { timeout_ms: 60000 });
        const wall = performance.now() - t0;
        const s = r.shards[0];
        flushes.push({ i: i + 1, wall, elapsed: r.elapsed_ms, sealed: s.sealed_generation, waited: s.waited_generation,
          current: s.current_generation, before: rowsBefore });
        mark = performance.now();
      }
    } finally {
      stop = true;
      await writer;
    }
    const writerMs = performance.now() - tw;
    fashionRows += writerRows;
    console.log(formatTable(["flush", "latency", "server elapsed_ms", "sealed gen", "waited gen", "current gen",
      "writer rows acked before it"],
    flushes.map((f) => [f.i, ms(f.wall), fmt(f.elapsed), f.sealed ?? "-", f.waited ?? "-", f.current, fmt(f.before)])));
    summary.flushP50 = percentile(flushes.map((f) => f.wall), 50);
    summary.flushMax = Math.max(...flushes.map((f) => f.wall));
    summary.writerRate = writerRows / (writerMs / 1000);
    console.log(`  writer (second connection): ${fmt(writerRows)} rows in ${secs(writerMs)} = ` +
      `${fmt(summary.writerRate)} rows/s, ${writerErrors.length} errors`);
    check("writer had no errors", writerErrors.length === 0, writerErrors[0]);
    check("each flush waited for the generation it sealed", flushes.every((f) => f.waited !== null && f.waited === f.sealed));
    check("generations strictly increase", flushes.every((f, i) => i === 0 || f.waited > flushes[i - 1].waited));

    // ---------------------------------------------------------------------------------------
    section(9, "mem_wal/describe/: generations, SSTables, in-memory index set");
    for (const name of ["fashion_mnist", "wordnet"]) {
      const d = await http(name, "mem_wal/describe/");
      for (const sh of d.shards) {
        console.log(`  ${name}: shard ${sh.shard_id}`);
        console.log(formatPairs([
          ["writer epoch", sh.writer_epoch],
          ["current generation", sh.current_generation],
          ["WAL replay after", `entry ${sh.replay_after_wal_entry_position} (last seen ${sh.wal_entry_position_last_seen})`],
          ["active MemTable", `generation ${sh.active.generation}: ${fmt(sh.active.rows)} rows, ` +
            `${fmt(sh.active.bytes / 1048576, 1)} MiB, age ${fmt(sh.active.age_ms)} ms`],
          ["frozen MemTables", sh.frozen.length === 0 ? "none" :
            sh.frozen.map((f) => `gen ${f.generation} (${fmt(f.rows)} rows)`).join(", ")],
          ["SSTables", `${sh.sstables.length}, ${fmt(sh.sstables.reduce((a, s) => a + s.rows, 0))} rows`],
        ], { indent: "    " }));
        if (sh.sstables.length) {
          console.log(formatTable(["generation", "rows", "path"],
            sh.sstables.map((s) => [s.generation, fmt(s.rows), s.path]), { indent: "      " }));
        }
        console.log("    in-memory indexes of the active MemTable:");
        console.log(formatTable(["kind", "column", "name", "rows_indexed"],
          sh.indexes.map((x) => [x.kind, x.column, x.name, fmt(x.rows_indexed)]), { indent: "      " }));
        if (name === "fashion_mnist") {
          check("HNSW entry on vector in the in-memory index set",
            sh.indexes.some((x) => x.kind === "HNSW" && x.column === "vector" && x.rows_indexed === sh.active.rows));
        }
      }
    }

    // ---------------------------------------------------------------------------------------
    section(10, "graceful restart on the same data directory");
    const probeQ = 1;
    const beforeTop = (await fashion.search(queryVector(test, probeQ)).distanceType("l2").limit(K).select(["id"]).toArray())
      .map((r) => Number(r.id));
    const beforeFts = (await fts(FTS_EXAMPLES[0], 1))[0]?.synset;
    t = performance.now();
    await server.stop();
    const stopMs = performance.now() - t;
    console.log(`  SIGTERM -> exit code ${server.exitInfo?.code} after ${ms(stopMs)}`);
    t = performance.now();
    await server.start();
    const startMs = performance.now() - t;
    console.log(`  restarted on ${server.url}: listening after ${ms(startMs)} (claims the shards, replays the WAL)`);
    const db2 = await connect();
    // The first request to a table after a start opens its shard: claim, read the SSTables,
    // replay the WAL after the last flushed generation into a MemTable (indexing those rows).
    t = performance.now();
    const fashion2 = await db2.openTable("fashion_mnist");
    const fCount = await fashion2.countRows();
    const fOpenMs = performance.now() - t;
    t = performance.now();
    const wordnet2 = await db2.openTable("wordnet");
    const wCount = await wordnet2.countRows();
    const wOpenMs = performance.now() - t;
    console.log(`  first openTable + countRows: fashion_mnist ${ms(fOpenMs)}, wordnet ${ms(wOpenMs)}`);
    console.log(formatTable(["table", "acknowledged", "countRows after restart"],
      [["fashion_mnist", fmt(fashionRows), fmt(fCount)], ["wordnet", fmt(wordnetRows), fmt(wCount)]]));
    const afterTop = (await fashion2.search(queryVector(test, probeQ)).distanceType("l2").limit(K).select(["id"]).toArray())
      .map((r) => Number(r.id));
    const afterFts = (await wordnet2.query().fullTextSearch(FTS_EXAMPLES[0], { columns: ["gloss"] }).limit(1).toArray())[0]?.synset;
    const dogAfter = (await wordnet2.query().where(`synset = '${dogId}'`).toArray())[0];
    summary.restart = fCount === fashionRows && wCount === wordnetRows;
    check("fashion_mnist count intact", fCount === fashionRows, `${fCount} vs ${fashionRows}`);
    check("wordnet count intact", wCount === wordnetRows, `${wCount} vs ${wordnetRows}`);
    check("vector query answers the same top-10 after the restart", afterTop.join() === beforeTop.join());
    check("FTS query answers the same top hit after the restart", afterFts === beforeFts, `${afterFts}`);
    check("the upserted gloss survived", Boolean(dogAfter?.gloss.includes("zyzzyvadog")));
    await fashion2.indexStats("vector_idx").then((s) => console.log(`  indexStats(vector_idx) after restart: ${JSON.stringify(s)}`));
  } catch (e) {
    failed = e;
    console.error(`\ndemo: FAILED: ${e.stack || e.message}`);
    console.error("server log (last 3,000 characters):\n" + server.logTail(3000));
  } finally {
    if (opts.keep) {
      await server.stop();
      console.log(`\n  data kept in ${server.dataDir}`);
    } else {
      await server.stop(5000);
      fs.rmSync(server.dataDir, { recursive: true, force: true });
      removed = true;
    }
  }

  // -----------------------------------------------------------------------------------------
  const wallMs = performance.now() - tStart;
  const bad = checks.filter((c) => !c.ok);
  section("", "summary");
  const na = (v, f) => (v === undefined ? "-" : f(v));
  console.log(formatTable(["what", "figure"], [
    ["Fashion-MNIST rows loaded", fmt(train.n)],
    [`ingest (batches of ${fmt(opts.batch)}, HNSW maintained)`, na(summary.ingest, (v) => `${fmt(v)} rows/s`)],
    ["vector index time", summary.indexTime ?? "-"],
    [`recall@10 (${fmt(opts.queries)} queries)`, na(summary.recall, (v) => v.toFixed(4))],
    [`queries/s (${opts.concurrency} in flight)`, na(summary.qps, (v) => fmt(v))],
    [`filtered recall@10 (label = ${FILTER_LABEL})`, na(summary.fRecall, (v) => v.toFixed(4))],
    ["WordNet FTS", summary.fts ?? "-"],
    ["flush latency p50 / max", summary.flushP50 === undefined ? "-" : `${ms(summary.flushP50)} / ${ms(summary.flushMax)}`],
    ["writer during flushes", na(summary.writerRate, (v) => `${fmt(v)} rows/s`)],
    ["counts intact after restart", summary.restart === undefined ? "-" : summary.restart ? "yes" : "NO"],
    ["checks passed", `${checks.length - bad.length}/${checks.length}`],
    ["total wall time", secs(wallMs)],
  ], { right: false }));
  console.log(`  load average now ${os.loadavg().map((x) => x.toFixed(2)).join(", ")}`);
  if (failed || bad.length) {
    for (const c of bad) console.log(`  FAILED: ${c.what}`);
    if (failed) console.log(`  FAILED: ${failed.message}`);
    console.log("demo: FAILED");
    process.exit(1);
  }
  console.log("demo: OK");
}

main().catch((e) => {
  console.error(`demo: ${e.message}`);
  process.exit(2);
});
