// IVF_PQ recall@10 and q/s on the seeded clustered 128-d rows of `clustered_vectors`
// (bench/clustered_vectors.cc: 1,000 centres uniform in [-1,1]^128, Gaussian spread 0.1 per
// dimension), Strata (remote, `strata serve`) next to LanceDB OSS local, on exactly the same rows.
//
//   node bench/ivfpq_clustered.mjs --data /tmp/clustered500k [--systems lancedb,strata]
//        [--partitions P] [--sub-vectors 16] [--bits 8] [--work-dir /tmp] [--json out.json]
//
// --data DIR holds base.fvecs (row i has id i), queries.fvecs and truth.json ({"ids": [[...]],
// "dist": [[...]]}: the exact top 10 by squared l2, nearest first), as `clustered_vectors --rows N
// --queries 200 --k 10 --out DIR` writes them.
//
// Both systems get the table {id int64, vector fixed_size_list<float32>[128]} and
// `Index.ivfPq({numPartitions: P, numSubVectors, numBits, distanceType: "l2"})`, P =
// round(sqrt(rows)) unless --partitions (Strata's default; LanceDB's too). The other training
// knobs (sample_rate 256, max_iterations 50) are left at the defaults, which are the same in both.
// - LanceDB: createTable + add in --batch-rows batches, then createIndex (synchronous: the
//   build time is its wall time); index size = bytes under the table's _indices/.
// - Strata: `strata serve --compaction-idle-seconds 5 --background-nice 0` on a fresh data dir,
//   `strata import base.fvecs` (ids from 0), flush/ and compact/ until no SSTable is left and the
//   base holds every row, then createIndex through the SDK; the build time runs from
//   createIndex to `index/{name}/stats/` reporting a base_index over every row (polled every
//   second). explain_plan/ of one query per point must name IVF_PQ on the base.
// Queries: the 200 queries, one client, `.nearestTo(q).nprobes(n)[.refineFactor(r)].limit(10)
// .select(["id"])`; each point gets a warm-up of 20 queries, then the 200 are timed (q/s = 200 /
// wall time) and scored: recall@10 = |returned ids (distinct) ∩ true top-10| / 10, averaged.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { REPO, loadClients } from "../scripts/lib/datasets.mjs";
import { openLance, openStrata, STRATA_DB } from "./compare/systems.mjs";

// LanceDB logs a deprecation warning per query that selects columns without _distance (read when
// loadClients() first loads the client).
process.env.LANCEDB_LOG ??= "error";

const K = 10;
const TABLE = "clustered";
const INDEX_NAME = "vector_idx";
const POINTS = [
  { nprobes: 20, refine: null },
  { nprobes: 20, refine: 10 },
  { nprobes: 20, refine: 20 },
  { nprobes: 20, refine: 50 },
  { nprobes: 20, refine: 100 },
  { nprobes: 50, refine: 10 },
];

function usage(code) {
  console.log(`usage: node bench/ivfpq_clustered.mjs --data DIR [--systems lancedb,strata] [--partitions P]
  [--sub-vectors 16] [--bits 8] [--batch-rows 100000] [--work-dir ${os.tmpdir()}]
  [--strata ${path.join(REPO, "build/release/strata")}] [--json FILE]`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = {
    data: null, systems: ["lancedb", "strata"], partitions: 0, subVectors: 16, bits: 8,
    batchRows: 100000, workDir: os.tmpdir(), strata: path.join(REPO, "build/release/strata"), json: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) usage(2);
      return argv[++i];
    };
    if (a === "--data") o.data = v();
    else if (a === "--systems") o.systems = v().split(",");
    else if (a === "--partitions") o.partitions = Number(v());
    else if (a === "--sub-vectors") o.subVectors = Number(v());
    else if (a === "--bits") o.bits = Number(v());
    else if (a === "--batch-rows") o.batchRows = Number(v());
    else if (a === "--work-dir") o.workDir = v();
    else if (a === "--strata") o.strata = v();
    else if (a === "--json") o.json = v();
    else if (a === "--help" || a === "-h") usage(0);
    else {
      console.error(`unknown argument ${a}`);
      usage(2);
    }
  }
  if (!o.data) usage(2);
  for (const s of o.systems) if (s !== "lancedb" && s !== "strata") usage(2);
  return o;
}

const log = (m) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

/** .fvecs geometry of `file`: {dim, rows}; every row must have the first row's dimension. */
function fvecsInfo(file) {
  const fd = fs.openSync(file, "r");
  const b = Buffer.alloc(4);
  fs.readSync(fd, b, 0, 4, 0);
  fs.closeSync(fd);
  const dim = b.readInt32LE(0);
  const size = fs.statSync(file).size;
  const rowBytes = 4 + 4 * dim;
  if (dim <= 0 || size % rowBytes !== 0) throw new Error(`${file}: not .fvecs of dim ${dim} (${size} bytes)`);
  return { dim, rows: size / rowBytes };
}

/** Rows [start, end) of an .fvecs file as one Float32Array (end - start) x dim. */
function readFvecs(file, dim, start, end) {
  const rowBytes = 4 + 4 * dim;
  const n = end - start;
  const buf = Buffer.alloc(n * rowBytes);
  const fd = fs.openSync(file, "r");
  let off = 0;
  while (off < buf.length) {
    const got = fs.readSync(fd, buf, off, buf.length - off, start * rowBytes + off);
    if (got === 0) throw new Error(`${file}: short read`);
    off += got;
  }
  fs.closeSync(fd);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    if (buf.readInt32LE(i * rowBytes) !== dim) throw new Error(`${file}: row ${start + i} is not of dim ${dim}`);
    out.set(new Float32Array(buf.buffer, buf.byteOffset + i * rowBytes + 4, dim), i * dim);
  }
  return out;
}

function schemaOf(arrow, dim) {
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("vector", new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
}

/** One Arrow table of rows [start, end) with ids start..end-1. */
function batchOf(arrow, schema, dim, values, start, end) {
  const n = end - start;
  const ids = new BigInt64Array(n);
  for (let i = 0; i < n; i++) ids[i] = BigInt(start + i);
  const [idF, vecF] = schema.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * dim, nullCount: 0, data: values });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, struct)]);
}

function dirBytes(dir) {
  if (!fs.existsSync(dir)) return 0;
  let s = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    s += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return s;
}

/** Runs every point on `table`; returns [{nprobes, refine, recall_at_10, qps}]. */
async function runPoints(table, queries, truth, system, explain) {
  const out = [];
  for (const p of POINTS) {
    const build = (v) => {
      let q = table.query().nearestTo(v).nprobes(p.nprobes);
      if (p.refine != null) q = q.refineFactor(p.refine);
      return q.limit(K).select(["id"]);
    };
    if (explain) {
      const plan = await explain(p);
      log(`  ${system} explain nprobes=${p.nprobes} refine=${p.refine ?? "none"}: ${plan}`);
    }
    for (let i = 0; i < Math.min(20, queries.length); i++) await build(queries[i]).toArray(); // warm-up
    let recall = 0;
    const t0 = performance.now();
    const answers = [];
    for (let i = 0; i < queries.length; i++) answers.push(await build(queries[i]).toArray());
    const secs = (performance.now() - t0) / 1000;
    for (let i = 0; i < queries.length; i++) {
      const want = new Set(truth.ids[i].slice(0, K));
      let hit = 0;
      for (const id of new Set(answers[i].map((r) => Number(r.id)))) if (want.has(id)) hit++;
      recall += Math.min(hit, K) / K;
    }
    const e = { system, nprobes: p.nprobes, refine: p.refine, recall_at_10: recall / queries.length, qps: queries.length / secs };
    log(`  ${system} nprobes=${p.nprobes} refine=${p.refine ?? "none"}: recall@10 ${e.recall_at_10.toFixed(4)}, ${e.qps.toFixed(1)} q/s`);
    out.push(e);
  }
  return out;
}

async function runLance(o, ctx) {
  const { lancedb, arrow } = loadClients();
  const dir = fs.mkdtempSync(path.join(o.workDir, "ivfclu-lance-"));
  const sys = await openLance({ dir });
  try {
    const schema = schemaOf(arrow, ctx.dim);
    log(`lancedb: loading ${ctx.rows} rows into ${dir} in batches of ${o.batchRows}`);
    const tl = performance.now();
    let table = null;
    for (let s = 0; s < ctx.rows; s += o.batchRows) {
      const e = Math.min(ctx.rows, s + o.batchRows);
      const b = batchOf(arrow, schema, ctx.dim, readFvecs(ctx.base, ctx.dim, s, e), s, e);
      if (table === null) table = await sys.db.createTable(TABLE, b);
      else await table.add(b);
    }
    const loadS = (performance.now() - tl) / 1000;
    const count = await table.countRows();
    if (count !== ctx.rows) throw new Error(`lancedb: ${count} rows, want ${ctx.rows}`);
    log(`lancedb: loaded ${count} rows in ${loadS.toFixed(1)} s; building IVF_PQ (partitions ${ctx.partitions}, ` +
      `sub-vectors ${o.subVectors}, bits ${o.bits})`);
    const tb = performance.now();
    await table.createIndex("vector", {
      config: lancedb.Index.ivfPq({
        numPartitions: ctx.partitions, numSubVectors: o.subVectors, numBits: o.bits, distanceType: "l2",
      }),
    });
    const buildS = (performance.now() - tb) / 1000;
    const indices = await table.listIndices();
    const name = indices.find((i) => i.columns.includes("vector"))?.name;
    const stats = name ? await table.indexStats(name) : null;
    const indexBytes = dirBytes(path.join(dir, `${TABLE}.lance`, "_indices"));
    log(`lancedb: index built in ${buildS.toFixed(1)} s: ${JSON.stringify(indices)} ${JSON.stringify(stats)}, ` +
      `${indexBytes} bytes under _indices/`);
    if (!stats || stats.numIndexedRows !== ctx.rows || stats.numUnindexedRows !== 0) {
      throw new Error(`lancedb: index does not cover every row: ${JSON.stringify(stats)}`);
    }
    const explain = async (p) => {
      let q = table.query().nearestTo(ctx.queries[0]).nprobes(p.nprobes);
      if (p.refine != null) q = q.refineFactor(p.refine);
      const plan = await q.limit(K).select(["id"]).explainPlan(false);
      // The IVF lines (partitions probed) and the exact re-ranking (KNNVectorDistance = refine).
      const lines = plan.split("\n").map((l) => l.trim()).filter((l) => /ANNIvfPartition|ANNSubIndex|KNNVectorDistance/.test(l));
      if (!lines.some((l) => l.startsWith("ANNIvfPartition"))) throw new Error(`lancedb: plan without the IVF index: ${plan}`);
      return lines.join(" | ");
    };
    const points = await runPoints(table, ctx.queries, ctx.truth, "lancedb", explain);
    return { system: "lancedb", load_s: loadS, build_s: buildS, index_bytes: indexBytes, index_stats: stats, points };
  } finally {
    await sys.close();
  }
}

async function runStrata(o, ctx) {
  const { lancedb } = loadClients();
  const dataDir = fs.mkdtempSync(path.join(o.workDir, "ivfclu-strata-"));
  const sys = await openStrata({
    strataBin: o.strata, dataDir, extraArgs: ["--compaction-idle-seconds", "5", "--background-nice", "0"],
  });
  const call = async (route, body = {}) => {
    const res = await fetch(`${sys.baseUrl}/v1/table/${TABLE}/${route}`, {
      method: "POST",
      headers: { "x-lancedb-database": STRATA_DB, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) };
  };
  const must = async (route, body) => {
    const r = await call(route, body);
    if (r.status !== 200) throw new Error(`strata ${route}: HTTP ${r.status}: ${r.text}`);
    return r.json();
  };
  try {
    log(`strata: ${sys.baseUrl}, data ${dataDir}; strata import ${ctx.base}`);
    const tl = performance.now();
    const imp = execFileSync(o.strata, ["import", "--url", sys.baseUrl, "--db", STRATA_DB, "--table", TABLE,
      "--id-start", "0", "--json", ctx.base], { encoding: "utf8", maxBuffer: 1 << 24 });
    const loadS = (performance.now() - tl) / 1000;
    log(`strata: import ${loadS.toFixed(1)} s: ${imp.trim().split("\n").pop()}`);
    await must("flush/", { timeout_ms: 600000 });
    // compact/ runs one bounded unit (--compaction-max-rows); repeat until no SSTable is left.
    for (;;) {
      const r = await call("compact/", { timeout_ms: 600000 });
      if (r.status === 409) {
        await new Promise((res) => setTimeout(res, 1000));
        continue;
      }
      if (r.status !== 200) throw new Error(`strata compact/: HTTP ${r.status}: ${r.text}`);
      const j = r.json();
      log(`strata: compact/ ${JSON.stringify(j)}`);
      if (j.sstables_remaining === 0) break;
    }
    const desc = await must("mem_wal/describe/");
    const baseRows = desc.base?.rows;
    log(`strata: base ${JSON.stringify({ ...desc.base, indexes: undefined })}`);
    if (baseRows !== ctx.rows) throw new Error(`strata: base holds ${baseRows} rows, want ${ctx.rows}`);
    const table = await sys.db.openTable(TABLE);
    const count = await table.countRows();
    if (count !== ctx.rows) throw new Error(`strata: ${count} rows, want ${ctx.rows}`);

    log(`strata: building IVF_PQ (partitions ${ctx.partitions}, sub-vectors ${o.subVectors}, bits ${o.bits})`);
    const tb = performance.now();
    await table.createIndex("vector", {
      config: lancedb.Index.ivfPq({
        numPartitions: ctx.partitions, numSubVectors: o.subVectors, numBits: o.bits, distanceType: "l2",
      }),
    });
    let stats;
    for (;;) {
      stats = await must(`index/${INDEX_NAME}/stats/`);
      if (stats.base_index && stats.base_index.rows === ctx.rows && stats.num_unindexed_rows === 0) break;
      await new Promise((res) => setTimeout(res, 1000));
    }
    const buildS = (performance.now() - tb) / 1000;
    const list = await must("index/list/");
    log(`strata: index built in ${buildS.toFixed(1)} s: stats ${JSON.stringify(stats)}; list ${JSON.stringify(list)}`);
    const bi = stats.base_index;
    if (bi.index_type !== "IVF_PQ" || bi.num_partitions !== ctx.partitions || bi.num_sub_vectors !== o.subVectors ||
      bi.num_bits !== o.bits) {
      throw new Error(`strata: base index is not the one asked for: ${JSON.stringify(bi)}`);
    }
    const explain = async (p) => {
      let q = table.query().nearestTo(ctx.queries[0]).nprobes(p.nprobes);
      if (p.refine != null) q = q.refineFactor(p.refine);
      const plan = await q.limit(K).select(["id"]).explainPlan(false);
      if (!/IVF_PQ/.test(plan)) throw new Error(`strata: explain_plan/ does not name IVF_PQ: ${plan}`);
      return plan.replace(/\s+/g, " ").trim();
    };
    const points = await runPoints(table, ctx.queries, ctx.truth, "strata", explain);
    return {
      system: "strata", load_s: loadS, build_s: buildS, index_bytes: bi.memory_bytes ?? null, index_stats: stats,
      points,
    };
  } catch (e) {
    console.error(sys.server.logTail(3000));
    throw e;
  } finally {
    await sys.close();
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const base = path.join(o.data, "base.fvecs");
  const { dim, rows } = fvecsInfo(base);
  const qi = fvecsInfo(path.join(o.data, "queries.fvecs"));
  if (qi.dim !== dim) throw new Error(`queries of dim ${qi.dim}, base of dim ${dim}`);
  const qv = readFvecs(path.join(o.data, "queries.fvecs"), dim, 0, qi.rows);
  const queries = [];
  for (let i = 0; i < qi.rows; i++) queries.push(Array.from(qv.subarray(i * dim, (i + 1) * dim)));
  const truth = JSON.parse(fs.readFileSync(path.join(o.data, "truth.json"), "utf8"));
  if (truth.ids.length !== queries.length) throw new Error(`truth.json: ${truth.ids.length} queries, want ${queries.length}`);
  const partitions = o.partitions || Math.round(Math.sqrt(rows));
  log(`data ${o.data}: ${rows} rows x ${dim}, ${queries.length} queries; IVF_PQ num_partitions ${partitions} ` +
    `(${o.partitions ? "--partitions" : "round(sqrt(rows))"}), num_sub_vectors ${o.subVectors}, num_bits ${o.bits}`);
  const ctx = { base, dim, rows, queries, truth, partitions };
  const results = [];
  for (const s of o.systems) results.push(s === "lancedb" ? await runLance(o, ctx) : await runStrata(o, ctx));

  console.log(`\nIVF_PQ on ${o.data} (${rows} rows, ${dim}-d): num_partitions ${partitions}, num_sub_vectors ` +
    `${o.subVectors}, num_bits ${o.bits}, l2; ${queries.length} queries, 1 client`);
  for (const r of results) {
    console.log(`  ${r.system}: load ${r.load_s.toFixed(1)} s, index build ${r.build_s.toFixed(1)} s, ` +
      `index ${r.index_bytes != null ? (r.index_bytes / 1048576).toFixed(1) + " MiB" : "size not reported"}` +
      (r.system === "lancedb" ? " (files under _indices/)" : " (base_index.memory_bytes)"));
  }
  const header = ["nprobes", "refine", ...results.flatMap((r) => [`${r.system} recall@10`, `${r.system} q/s`])];
  console.log("\n| " + header.join(" | ") + " |\n|" + header.map(() => " --- |").join(""));
  POINTS.forEach((p, i) => {
    const cells = [String(p.nprobes), p.refine == null ? "none" : String(p.refine)];
    for (const r of results) cells.push(r.points[i].recall_at_10.toFixed(3), r.points[i].qps.toFixed(1));
    console.log("| " + cells.join(" | ") + " |");
  });
  if (o.json) {
    fs.writeFileSync(o.json, JSON.stringify({ data: o.data, rows, dim, queries: queries.length, partitions,
      num_sub_vectors: o.subVectors, num_bits: o.bits, results }, null, 2));
    log(`wrote ${o.json}`);
  }
}

await main();
