#!/usr/bin/env node
// `make demo`: Fashion-MNIST through strata serve with the real LanceDB Node client.
//
//   node scripts/demo.mjs --strata build/release/strata [--queries 200] [--batch 1000] [--keep]
//
// 1. Reads Debian's dataset-fashion-mnist (IDX files, gzip) from /usr/share/datasets/fashion-mnist
//    (override with --dataset DIR).
// 2. Starts `strata serve` on a free loopback port with a temporary data directory.
// 3. Creates table `fashion_mnist` (id int64, label int32, vector fixed_size_list<float32, 784>)
//    and adds the 60,000 training images in batches of 1,000. Pixels are stored as float32
//    values 0..255 (the raw bytes, not rescaled).
// 4. Restarts the server and checks countRows == 60,000.
// 5. Runs 200 test images as k=10 l2 queries and checks every answer against the exact top-10
//    computed here by brute force (squared l2 over integer pixels, so the reference distances
//    are exact). Ties at the 10th place, and float32 rounding on the server, are allowed within a
//    relative tolerance of 1e-5. Prints recall@10 (must be 1.0), ingest rows/s and queries/s.
// Exits non-zero on any failure.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import os from "node:os";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The pinned clients live in tests/e2e/node_modules; resolve them from there.
const requireE2E = createRequire(path.join(REPO, "tests/e2e/package.json"));
let lancedb;
let arrow;
try {
  lancedb = requireE2E("@lancedb/lancedb");
  arrow = requireE2E("apache-arrow");
} catch (e) {
  console.error(`demo: cannot load @lancedb/lancedb / apache-arrow from tests/e2e/node_modules ` +
    `(run scripts/install-deps): ${e.message}`);
  process.exit(2);
}
const { StrataServer } = await import(path.join(REPO, "tests/e2e/lib/server.mjs"));

const DIM = 784;
const K = 10;
const TOL = 1e-5;

function parseArgs(argv) {
  const opts = {
    strata: undefined,
    dataset: "/usr/share/datasets/fashion-mnist",
    queries: 200,
    batch: 1000,
    keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--strata") opts.strata = val();
    else if (a === "--dataset") opts.dataset = val();
    else if (a === "--queries") opts.queries = Number(val());
    else if (a === "--batch") opts.batch = Number(val());
    else if (a === "--keep") opts.keep = true;
    else if (a === "--help" || a === "-h") {
      console.log("usage: node scripts/demo.mjs --strata PATH [--dataset DIR] [--queries N] [--batch N] [--keep]");
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(opts.queries) || opts.queries < 1 || opts.queries > 10000) {
    throw new Error("--queries must be an integer in [1, 10000]");
  }
  if (!Number.isInteger(opts.batch) || opts.batch < 1 || opts.batch > 60000) {
    throw new Error("--batch must be an integer in [1, 60000]");
  }
  return opts;
}

/** Reads a gzipped IDX file (http://yann.lecun.com/exdb/mnist/ format): big-endian header. */
function readIdx(file, wantMagic, wantDims) {
  const buf = zlib.gunzipSync(fs.readFileSync(file));
  const magic = buf.readUInt32BE(0);
  if (magic !== wantMagic) throw new Error(`${file}: magic 0x${magic.toString(16)}, want 0x${wantMagic.toString(16)}`);
  const ndim = magic & 0xff;
  const dims = [];
  for (let i = 0; i < ndim; i++) dims.push(buf.readUInt32BE(4 + 4 * i));
  if (wantDims && dims.slice(1).join("x") !== wantDims.join("x")) {
    throw new Error(`${file}: dims ${dims.join("x")}`);
  }
  const header = 4 + 4 * ndim;
  const count = dims.reduce((a, b) => a * b, 1);
  if (buf.length !== header + count) throw new Error(`${file}: ${buf.length} bytes, want ${header + count}`);
  return { dims, data: new Uint8Array(buf.buffer, buf.byteOffset + header, count) };
}

function loadSplit(dir, prefix) {
  const images = readIdx(path.join(dir, `${prefix}-images-idx3-ubyte.gz`), 0x803, [28, 28]);
  const labels = readIdx(path.join(dir, `${prefix}-labels-idx1-ubyte.gz`), 0x801, []);
  if (images.dims[0] !== labels.dims[0]) throw new Error(`${prefix}: ${images.dims[0]} images, ${labels.dims[0]} labels`);
  return { n: images.dims[0], pixels: images.data, labels: labels.data };
}

/** One Arrow record batch (as a Table) of rows [start, end) of the training set. */
function makeBatchTable(schema, train, start, end) {
  const n = end - start;
  const ids = new BigInt64Array(n);
  const labels = new Int32Array(n);
  const values = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(start + i);
    labels[i] = train.labels[start + i];
  }
  const px = train.pixels.subarray(start * DIM, end * DIM);
  for (let j = 0; j < px.length; j++) values[j] = px[j];
  const [idF, labelF, vecF] = schema.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * DIM, nullCount: 0, data: values });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: labelF.type, length: n, nullCount: 0, data: labels }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, struct)]);
}

// Exact reference, run in worker threads (one per core, at most 8). For each query the worker
// computes squared l2 over the integer pixels to every training image (exact in float64), and
// returns the exact top-k as [{id, d}] sorted by (d, id) plus the exact distance of every id
// the server returned.
const WORKER_SRC = `
const { parentPort, workerData } = require("node:worker_threads");
const { train, n, dim, k } = workerData;
const px = new Uint8Array(train);
parentPort.on("message", ({ q, qpx, ids }) => {
  const dist = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let s = 0;
    const base = r * dim;
    for (let j = 0; j < dim; j++) {
      const d = px[base + j] - qpx[j];
      s += d * d;
    }
    dist[r] = s;
  }
  const best = [];
  for (let id = 0; id < n; id++) {
    const d = dist[id];
    if (best.length === k && d >= best[k - 1].d) continue;
    let pos = best.length;
    while (pos > 0 && best[pos - 1].d > d) pos--;
    best.splice(pos, 0, { id, d });
    if (best.length > k) best.pop();
  }
  const of = ids.map((id) => (Number.isInteger(id) && id >= 0 && id < n ? dist[id] : undefined));
  parentPort.postMessage({ q, exact: best, of });
});
`;

/** Exact top-k for each query; resolves with [{exact, of}] in query order. */
async function exactReference(train, test, answers, k) {
  const shared = new SharedArrayBuffer(train.pixels.length);
  new Uint8Array(shared).set(train.pixels);
  const nWorkers = Math.max(1, Math.min(8, os.availableParallelism?.() ?? os.cpus().length, answers.length));
  const results = new Array(answers.length);
  let next = 0;
  const workers = [];
  try {
    await Promise.all(
      Array.from({ length: nWorkers }, () => {
        const w = new Worker(WORKER_SRC, { eval: true, workerData: { train: shared, n: train.n, dim: DIM, k } });
        workers.push(w);
        return new Promise((resolve, reject) => {
          const send = () => {
            if (next >= answers.length) return resolve();
            const q = next++;
            const qpx = test.pixels.slice(q * DIM, (q + 1) * DIM);
            w.postMessage({ q, qpx, ids: answers[q].map((r) => r.id) });
          };
          w.on("message", (m) => {
            results[m.q] = m;
            send();
          });
          w.on("error", reject);
          send();
        });
      }),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return { results, nWorkers };
}

function fmt(n, digits = 0) {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  const train = loadSplit(opts.dataset, "train");
  const test = loadSplit(opts.dataset, "t10k");
  if (train.n !== 60000) throw new Error(`expected 60,000 training images, found ${train.n}`);
  if (opts.queries > test.n) throw new Error(`--queries ${opts.queries} > ${test.n} test images`);
  console.log(
    `demo: Fashion-MNIST ${fmt(train.n)} train / ${fmt(test.n)} test images, ${DIM}-d, pixels as float32 0..255 ` +
      `(loaded in ${fmt(performance.now() - t0)} ms)`,
  );

  const server = new StrataServer({ bin: opts.strata, startTimeoutMs: 60000 });
  let ok = false;
  try {
    await server.start();
    console.log(`demo: ${server.bin} serving ${server.url}, data ${server.dataDir}`);
    const connect = () => lancedb.connect("db://demo", { apiKey: "x", hostOverride: server.url });
    let db = await connect();

    const schema = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("label", new arrow.Int32(), false),
      new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true),
    ]);
    let table = await db.createEmptyTable("fashion_mnist", schema);

    // Ingest.
    const tty = process.stdout.isTTY;
    let ingestMs = 0;
    for (let start = 0; start < train.n; start += opts.batch) {
      const end = Math.min(train.n, start + opts.batch);
      const batch = makeBatchTable(schema, train, start, end);
      const ta = performance.now();
      await table.add(batch);
      ingestMs += performance.now() - ta;
      const line = `ingest: ${fmt(end)}/${fmt(train.n)} rows, ${fmt((end / ingestMs) * 1000)} rows/s`;
      if (tty) process.stdout.write(`\r${line}   `);
      else if (end % 10000 === 0 || end === train.n) console.log(line);
    }
    if (tty) process.stdout.write("\n");
    const ingestRate = (train.n / ingestMs) * 1000;

    // Restart, then count.
    const tr = performance.now();
    await server.stop();
    const stopMs = performance.now() - tr;
    await server.start();
    const startMs = performance.now() - tr - stopMs;
    db = await connect();
    const tf = performance.now();
    table = await db.openTable("fashion_mnist");
    const count = await table.countRows();
    const firstCountMs = performance.now() - tf;
    console.log(`restart: stopped in ${fmt(stopMs)} ms, listening again after ${fmt(startMs)} ms; `
        + `openTable + countRows ${fmt(firstCountMs)} ms; countRows = ${fmt(count)}`);
    if (count !== train.n) throw new Error(`countRows ${count} after restart, want ${train.n}`);

    // Queries.
    const answers = [];
    const tq = performance.now();
    for (let q = 0; q < opts.queries; q++) {
      const vec = Float32Array.from(test.pixels.subarray(q * DIM, (q + 1) * DIM));
      const rows = await table.search(vec).distanceType("l2").limit(K).select(["id", "label"]).toArray();
      answers.push(rows.map((r) => ({ id: Number(r.id), label: r.label, distance: r._distance })));
    }
    const queryMs = performance.now() - tq;
    const qps = (opts.queries / queryMs) * 1000;

    // Check against exact brute force.
    const tc = performance.now();
    const { results: reference, nWorkers } = await exactReference(train, test, answers, K);
    let hits = 0;
    let identical = 0;
    const failures = [];
    for (let q = 0; q < opts.queries; q++) {
      const { exact, of } = reference[q];
      const kth = exact[K - 1].d;
      const got = answers[q];
      const seen = new Set();
      let good = 0;
      const problems = [];
      if (got.length !== K) problems.push(`${got.length} results`);
      got.forEach((r, i) => {
        const truth = of[i];
        if (truth === undefined) {
          problems.push(`bad id ${r.id}`);
          return;
        }
        if (seen.has(r.id)) problems.push(`id ${r.id} twice`);
        seen.add(r.id);
        if (Math.abs(r.distance - truth) > TOL * Math.max(1, truth)) {
          problems.push(`id ${r.id}: _distance ${r.distance}, exact ${truth}`);
        }
        if (r.label !== train.labels[r.id]) problems.push(`id ${r.id}: label ${r.label}, want ${train.labels[r.id]}`);
        if (i > 0 && r.distance < got[i - 1].distance) problems.push(`not sorted at ${i}`);
        if (truth <= kth * (1 + TOL)) good++;
        else problems.push(`id ${r.id} (exact ${truth}) is not in the top ${K} (10th exact ${kth})`);
      });
      hits += Math.min(good, K);
      const exactIds = new Set(exact.map((e) => e.id));
      if (got.length === K && got.every((r) => exactIds.has(r.id))) identical++;
      if (problems.length) failures.push(`query ${q}: ${problems.join("; ")}`);
    }
    const checkMs = performance.now() - tc;
    const recall = hits / (opts.queries * K);

    console.log(`queries: ${opts.queries} x k=${K} (l2) in ${fmt(queryMs)} ms = ${fmt(qps, 1)} queries/s ` +
      `(one at a time, ${fmt(queryMs / opts.queries, 2)} ms each)`);
    console.log(`check: exact brute force in JS, ${nWorkers} worker thread(s) (${fmt(checkMs)} ms; ${identical}/${opts.queries} answers have ` +
      `exactly the reference id set` +
      (identical < opts.queries ? " (the rest differ only by ties at the 10th place)" : "") + ")");
    console.log(`recall@10 = ${recall.toFixed(4)}`);
    console.log(`ingest: ${fmt(train.n)} rows in ${fmt(ingestMs / 1000, 2)} s = ${fmt(ingestRate)} rows/s ` +
      `(batches of ${fmt(opts.batch)}, durable WAL)`);
    if (failures.length) {
      for (const f of failures.slice(0, 10)) console.error(`FAIL ${f}`);
      throw new Error(`${failures.length} of ${opts.queries} answers differ from the exact top-${K}`);
    }
    if (recall !== 1) throw new Error(`recall@10 = ${recall}, want 1.0`);
    ok = true;
    console.log("demo: OK");
  } catch (e) {
    console.error(`demo: FAILED: ${e.stack || e.message}`);
    console.error(server.logTail(3000));
  } finally {
    if (opts.keep) {
      await server.stop();
      console.log(`demo: data kept in ${server.dataDir}`);
    } else {
      await server.cleanup();
    }
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(`demo: ${e.stack || e.message}`);
  process.exit(1);
});
