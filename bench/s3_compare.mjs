#!/usr/bin/env node
// Local disk against an S3 object store, side by side in one run (issue 17 "Benchmarks",
// `make bench-s3`). Two `strata serve` processes of the same binary: one on a local data
// directory, one with `--store s3://$STRATA_S3_BUCKET/bench-s3/...` on the radosgw that
// scripts/s3-local started (its export lines must be in the environment). Both are driven by
// the official LanceDB client (remote mode) with the same seeded 128-d vectors, and every
// measurement alternates between the two in each of --rounds rounds; the figures are the
// medians over rounds:
//  1. 1-row adds, 1 client: --adds sequential `add` calls; p50/p99 ms, adds/s.
//  2. 1-row adds, --clients concurrent clients (default 16), 2 x --adds in all (split evenly);
//     p50/p99 ms, adds/s, and WAL appends per WAL entry (= per WAL object put) from the
//     server's /metrics (strata_wal_appends_total / strata_wal_entries_total deltas).
//  3. 1,000-row batches: --rows rows per round into a table with an HNSW index; rows/s.
//  4. Vector search: --queries k=10 queries, one client, over that table (MemTable + SSTables
//     after a flush); q/s and p50 ms.
//  5. flush/: the time the server takes to seal and write the MemTable as an SSTable.
//  6. Restart: SIGTERM then start, and kill -9 then start (WAL replay); seconds from spawn to
//     the first answered vector query.
// Output: a table on stdout; --json FILE writes {rounds, local: {...}, s3: {...}, ratio: {...}}.
// Exit status 1 with a message when the S3 environment is missing or a step fails.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { REPO, loadClients } from "../scripts/lib/datasets.mjs";

const { StrataServer } = await import(pathToFileURL(path.join(REPO, "tests/e2e/lib/server.mjs")).href);
const { rng } = await import(pathToFileURL(path.join(REPO, "tests/e2e/lib/vectors.mjs")).href);

const DIM = 128;
const K = 10;

const { values: opt } = parseArgs({
  options: {
    bin: { type: "string", default: path.join(REPO, "build/release/strata") },
    rounds: { type: "string", default: "3" },
    adds: { type: "string", default: "200" },
    clients: { type: "string", default: "16" },
    rows: { type: "string", default: "20000" },
    queries: { type: "string", default: "300" },
    json: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (opt.help) {
  console.log("usage: node bench/s3_compare.mjs [--bin STRATA] [--rounds 3] [--adds 200] " +
    "[--clients 16] [--rows 20000] [--queries 300] [--json FILE]\n" +
    "needs the S3 environment of `eval \"$(scripts/s3-local start DIR)\"`");
  process.exit(0);
}
const num = (name, min) => {
  const v = Number(opt[name]);
  if (!Number.isInteger(v) || v < min) {
    console.error(`--${name} must be an integer >= ${min} (got ${opt[name]})`);
    process.exit(1);
  }
  return v;
};
const ROUNDS = num("rounds", 1), ADDS = num("adds", 16), CLIENTS = num("clients", 1);
const ROWS = num("rows", 1000), QUERIES = num("queries", 10);
for (const v of ["STRATA_S3_ENDPOINT", "STRATA_S3_BUCKET"]) {
  if (!process.env[v]) {
    console.error(`${v} is not set: run eval "$(scripts/s3-local start DIR)" first (or make bench-s3)`);
    process.exit(1);
  }
}

const { lancedb, arrow } = loadClients();
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
]);

/** Rows [first, first + n) as one Arrow table: id = row number, vector seeded by it. */
function batch(first, n) {
  const ids = new BigInt64Array(n);
  const values = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(first + i);
    const r = rng(first + i + 1);
    for (let j = 0; j < DIM; j++) values[i * DIM + j] = r();
  }
  const [idF, vecF] = schema.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * DIM, nullCount: 0, data: values });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, struct)]);
}

function queryVector(q) {
  const r = rng(1e9 + q);
  return Array.from({ length: DIM }, () => r());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : NaN;
};

async function metricSum(baseUrl, name) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(name + "{") || line.startsWith(name + " ")) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

class System {
  constructor(name, store) {
    this.name = name;
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `strata-bench-s3-${name}-`));
    this.server = new StrataServer({ bin: opt.bin, dataDir: this.dataDir, store, startTimeoutMs: 120000 });
    this.figures = {};  // name -> [value per round]
    this.nextId = 0;
  }
  note(key, v) {
    (this.figures[key] ??= []).push(v);
  }
  async start() {
    await this.server.start();
    this.db = await lancedb.connect("db://bench", { apiKey: "bench", hostOverride: this.server.url });
  }
  async open(name) {
    return this.db.openTable(name);
  }
  async flush(name) {
    const res = await fetch(`${this.server.url}/v1/table/${name}/flush/`, {
      method: "POST",
      headers: { "x-lancedb-database": "bench", "content-type": "application/json" },
      body: "{}",
    });
    if (res.status !== 200) throw new Error(`${this.name} flush/: HTTP ${res.status}: ${await res.text()}`);
  }
}

async function addsOneClient(sys) {
  const t = await sys.open("adds");
  const lat = [];
  const t0 = performance.now();
  for (let i = 0; i < ADDS; i++) {
    const s = performance.now();
    await t.add(batch(sys.nextId++, 1));
    lat.push(performance.now() - s);
  }
  const secs = (performance.now() - t0) / 1000;
  sys.note("add1_p50_ms", pct(lat, 0.5));
  sys.note("add1_p99_ms", pct(lat, 0.99));
  sys.note("add1_per_s", ADDS / secs);
}

async function addsManyClients(sys) {
  const tables = [];
  for (let c = 0; c < CLIENTS; c++) {
    const db = await lancedb.connect("db://bench", { apiKey: "bench", hostOverride: sys.server.url });
    tables.push(await db.openTable("adds"));
  }
  const each = Math.max(1, Math.ceil((2 * ADDS) / CLIENTS));
  const lat = [];
  const entries0 = await metricSum(sys.server.url, "strata_wal_entries_total");
  const appends0 = await metricSum(sys.server.url, "strata_wal_appends_total");
  const t0 = performance.now();
  await Promise.all(tables.map(async (t) => {
    for (let i = 0; i < each; i++) {
      const s = performance.now();
      await t.add(batch(sys.nextId++, 1));
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const entries = (await metricSum(sys.server.url, "strata_wal_entries_total")) - entries0;
  const appends = (await metricSum(sys.server.url, "strata_wal_appends_total")) - appends0;
  sys.note("addN_p50_ms", pct(lat, 0.5));
  sys.note("addN_p99_ms", pct(lat, 0.99));
  sys.note("addN_per_s", lat.length / secs);
  sys.note("addN_appends_per_wal_put", entries > 0 ? appends / entries : NaN);
}

async function batches(sys, round) {
  const t = await sys.open("vecs");
  const t0 = performance.now();
  for (let first = round * ROWS; first < (round + 1) * ROWS; first += 1000) {
    await t.add(batch(first, Math.min(1000, (round + 1) * ROWS - first)));
  }
  sys.note("batch1000_rows_per_s", ROWS / ((performance.now() - t0) / 1000));
  const n = await t.countRows();
  if (n !== (round + 1) * ROWS) throw new Error(`${sys.name}: vecs has ${n} rows, want ${(round + 1) * ROWS}`);
  const f0 = performance.now();
  await sys.flush("vecs");
  sys.note("flush_ms", performance.now() - f0);
}

async function searchOnce(t, q) {
  const rows = await t.vectorSearch(queryVector(q)).limit(K).select(["id"]).toArray();
  if (rows.length !== K) throw new Error(`search answered ${rows.length} rows, want ${K}`);
  return rows;
}

async function search(sys) {
  const t = await sys.open("vecs");
  await searchOnce(t, 0);  // warm the connection
  const lat = [];
  const t0 = performance.now();
  for (let q = 0; q < QUERIES; q++) {
    const s = performance.now();
    await searchOnce(t, q);
    lat.push(performance.now() - s);
  }
  sys.note("search_qps", QUERIES / ((performance.now() - t0) / 1000));
  sys.note("search_p50_ms", pct(lat, 0.5));
}

async function restart(sys, hard) {
  if (hard) await sys.server.kill9();
  else await sys.server.stop();
  const t0 = performance.now();
  await sys.start();
  const t = await sys.open("vecs");
  await searchOnce(t, 1);
  sys.note(hard ? "restart_kill9_first_answer_s" : "restart_first_answer_s", (performance.now() - t0) / 1000);
}

const systems = [new System("local", "local"), new System("s3", "s3")];
let failed = false;
try {
  for (const sys of systems) {
    await sys.start();
    await sys.db.createEmptyTable("adds", schema);
    const v = await sys.db.createEmptyTable("vecs", schema);
    await v.createIndex("vector", { config: lancedb.Index.hnswSq({ m: 16, efConstruction: 100 }) });
  }
  const steps = [
    ["1-row adds, 1 client", addsOneClient],
    [`1-row adds, ${CLIENTS} clients`, addsManyClients],
    ["1,000-row batches + flush", batches],
    ["vector search", search],
    ["restart (SIGTERM)", (s) => restart(s, false)],
    ["restart (kill -9)", (s) => restart(s, true)],
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, fn] of steps) {
      // Alternate which system goes first, so neither always runs on a warmer machine.
      const order = round % 2 === 0 ? systems : [...systems].reverse();
      for (const sys of order) {
        console.error(`round ${round + 1}/${ROUNDS}: ${label} (${sys.name})`);
        await fn(sys, round);
      }
    }
  }
} catch (e) {
  failed = true;
  console.error(e.stack || String(e));
  for (const sys of systems) console.error(`--- ${sys.name} server log tail ---\n${sys.server.logTail(3000)}`);
} finally {
  for (const sys of systems) {
    await sys.server.stop().catch(() => {});
    fs.rmSync(sys.dataDir, { recursive: true, force: true });
  }
}
if (failed) process.exit(1);

const [local, s3] = systems;
const keys = Object.keys(local.figures);
const out = { rounds: ROUNDS, adds: ADDS, clients: CLIENTS, rows_per_round: ROWS, queries: QUERIES, local: {}, s3: {}, ratio: {} };
console.log(`\nlocal disk vs S3 (radosgw), medians of ${ROUNDS} rounds`);
console.log(`${"figure".padEnd(32)} ${"local".padStart(10)} ${"s3".padStart(10)} ${"s3/local".padStart(9)}`);
for (const k of keys) {
  const a = median(local.figures[k]), b = median(s3.figures[k] ?? []);
  out.local[k] = a;
  out.s3[k] = b;
  out.ratio[k] = b / a;
  console.log(`${k.padEnd(32)} ${a.toFixed(2).padStart(10)} ${b.toFixed(2).padStart(10)} ${(b / a).toFixed(2).padStart(9)}`);
}
if (opt.json) {
  fs.writeFileSync(opt.json + ".tmp", JSON.stringify(out, null, 2));
  fs.renameSync(opt.json + ".tmp", opt.json);
}
