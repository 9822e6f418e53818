#!/usr/bin/env node
// REST benchmark of `strata serve` (issue 6, Benchmark): requests/s, rows/s and p50/p99 latency
// for four workloads at several numbers of concurrent keep-alive connections, plus the server's
// CPU use.
//
// Workloads (one table: id int64, vector fixed_size_list<float32>[128], text utf8, with an
// IVF_HNSW_SQ (l2, m 16, ef_construction 100, i.e. Index.hnswSq({m: 16, efConstruction: 100}))
// index on `vector` and the client's default FTS index on `text`, both created before any row;
// a base of --base-rows rows is loaded with 1,000-row inserts first):
//   insert_1      POST insert/ with a 1-row Arrow IPC stream body
//   insert_1000   POST insert/ with a 1,000-row Arrow IPC stream body
//   vector_k10    POST query/ {"vector":[128 floats],"k":10,...} (the LanceDB client's keys)
//   fts_k10       POST query/ {"full_text_query":{"columns":["text"],"query":"w1 w2"},"k":10,...}
// Query cells run first, so every query searches exactly the base rows; insert cells follow
// (the table's row count at the start of each cell is in the --json output).
//
// Wire format: as the @lancedb/lancedb 0.31 client speaks it (PROTOCOL.md §1, §5.2, §5.3):
// Arrow bodies are IPC *stream* format (`content-type: application/vnd.apache.arrow.stream`,
// chunked, no content-length) — uncompressed, since apache-arrow JS cannot write LZ4 frames
// (the client compresses with LZ4_FRAME); JSON bodies are compact with sorted keys.
// Raw node:http with one keep-alive Agent per cell (maxSockets = connections); each connection
// runs a closed loop (send, wait for the full answer, send the next).
//
// Each cell: --warmup seconds unmeasured, then --seconds measured. Requests that complete inside
// the measured window count (with their full latency, even if sent during the warmup);
// requests in flight at its end are awaited and dropped. Server CPU
// = (utime + stime of /proc/<pid>/stat, all threads) over the measured wall time, in cores.
// The client runs on the same machine and competes for its cores; its CPU is printed too.
//
// Optional extra cells (--tmpfs): insert_1 against a second server (same base rows) whose data
// directory is on /dev/shm (tmpfs: fsync returns at once), to show how much of the durable
// 1-row insert latency is the WAL fsync. Off by default to keep the default run under 3 min.
// Combine with --workloads insert_1 for a quick durable-vs-tmpfs comparison.
//
// Usage: node bench/rest_bench.mjs [--bin build/release/strata] [--seconds 5] [--warmup 1]
//          [--conns 1,8,32] [--base-rows 10000] [--workloads insert_1,insert_1000,vector_k10,fts_k10]
//          [--tmpfs] [--threads N (server --threads)] [--json out.json]
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");
const requireE2E = createRequire(path.join(REPO, "tests/e2e/package.json"));
const A = requireE2E("apache-arrow");
const { StrataServer } = await import(pathToFileURL(path.join(REPO, "tests/e2e/lib/server.mjs")).href);
const { rng, randomVector } = await import(pathToFileURL(path.join(REPO, "tests/e2e/lib/vectors.mjs")).href);

// ---------------------------------------------------------------- options
function parseArgs(argv) {
  const o = {
    bin: undefined,
    seconds: 5,
    warmup: 1,
    conns: [1, 8, 32],
    baseRows: 10000,
    dim: 128,
    workloads: ["insert_1", "insert_1000", "vector_k10", "fts_k10"],
    tmpfs: false,
    threads: 0,
    json: null,
    seed: 42,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    const num = (name, v, lo, hi) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < lo || n > hi) throw new Error(`${name} must be a number in [${lo}, ${hi}], got ${v}`);
      return n;
    };
    if (a === "--bin") o.bin = val();
    else if (a === "--seconds") o.seconds = num("--seconds", val(), 0.1, 3600);
    else if (a === "--warmup") o.warmup = num("--warmup", val(), 0, 600);
    else if (a === "--conns")
      o.conns = val()
        .split(",")
        .map((s) => num("--conns", s, 1, 1024));
    else if (a === "--base-rows") o.baseRows = num("--base-rows", val(), 1000, 10_000_000);
    else if (a === "--workloads") o.workloads = val().split(",");
    else if (a === "--tmpfs") o.tmpfs = true;
    else if (a === "--threads") o.threads = num("--threads", val(), 0, 1024);
    else if (a === "--json") o.json = val();
    else if (a === "--seed") o.seed = num("--seed", val(), 0, 2 ** 32 - 1);
    else if (a === "-h" || a === "--help") {
      console.log(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0]);
      process.exit(0);
    } else throw new Error(`unknown option ${a} (see --help)`);
  }
  const known = new Set(["insert_1", "insert_1000", "vector_k10", "fts_k10"]);
  for (const w of o.workloads) if (!known.has(w)) throw new Error(`unknown workload ${w}; known: ${[...known]}`);
  return o;
}

// ---------------------------------------------------------------- data
/** WordNet glosses (text after ' | ') of data.{noun,verb,adj,adv}, in file order. */
function loadGlosses() {
  const out = [];
  for (const pos of ["noun", "verb", "adj", "adv"]) {
    const file = `/usr/share/wordnet/data.${pos}`;
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, "latin1").split("\n")) {
      if (line.startsWith("  ") || line.length === 0) continue; // license header
      const bar = line.indexOf(" | ");
      if (bar >= 0) out.push(line.slice(bar + 3).trim());
    }
  }
  if (out.length === 0) throw new Error("no WordNet glosses found in /usr/share/wordnet/data.*");
  return out;
}

function shuffle(arr, rand) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return arr;
}

const STOP = new Set(
  "a an and are as at be by for from has in is it its of on or that the to was were will with which who what when where this these those not into than then".split(
    " ",
  ),
);

class Data {
  constructor(opts) {
    this.dim = opts.dim;
    this.rand = rng(opts.seed);
    this.glosses = shuffle(loadGlosses(), this.rand);
    this.nextId = 0;
  }
  text(i) {
    return this.glosses[i % this.glosses.length];
  }
  vectorType() {
    return new A.FixedSizeList(this.dim, new A.Field("item", new A.Float32(), true));
  }
  /** Arrow IPC stream of `n` rows (ids continue across calls). */
  ipc(n) {
    const ids = new BigInt64Array(n);
    const floats = new Float32Array(n * this.dim);
    const texts = new Array(n);
    for (let r = 0; r < n; r++) {
      const id = this.nextId++;
      ids[r] = BigInt(id);
      for (let d = 0; d < this.dim; d++) floats[r * this.dim + d] = this.rand() * 2 - 1;
      texts[r] = this.text(id);
    }
    const child = A.makeData({ type: new A.Float32(), length: n * this.dim, data: floats });
    const vec = A.makeData({ type: this.vectorType(), length: n, nullCount: 0, child });
    const table = new A.Table({
      id: A.makeVector(ids),
      vector: A.makeVector(vec),
      text: A.vectorFromArray(texts, new A.Utf8()),
    });
    return Buffer.from(A.tableToIPC(table, "stream"));
  }
  /** FTS query text: two content words of a gloss of the base rows. */
  ftsQuery(baseRows) {
    for (;;) {
      const g = this.text(Math.floor(this.rand() * baseRows));
      const words = g
        .toLowerCase()
        .split(/[^a-z]+/)
        .filter((w) => w.length >= 4 && !STOP.has(w));
      if (words.length === 0) continue;
      const a = words[Math.floor(this.rand() * words.length)];
      const b = words[Math.floor(this.rand() * words.length)];
      return a === b ? a : `${a} ${b}`;
    }
  }
}

/** Compact JSON with sorted keys, as the LanceDB client sends it. */
function sortedJson(v) {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

function vectorQueryBody(vec) {
  // Every key the 0.31 client sends for table.search(vec).limit(10) (PROTOCOL.md §5.2).
  return sortedJson({
    vector: Array.from(vec, (x) => Math.fround(x)),
    k: 10,
    version: null,
    prefilter: true,
    nprobes: 20,
    minimum_nprobes: 20,
    maximum_nprobes: 20,
    lower_bound: null,
    upper_bound: null,
    ef: null,
    refine_factor: null,
  });
}

function ftsQueryBody(q) {
  return sortedJson({
    full_text_query: { columns: ["text"], query: q },
    k: 10,
    prefilter: true,
    vector: [],
    version: null,
  });
}

// ---------------------------------------------------------------- HTTP
const ARROW = "application/vnd.apache.arrow.stream";

/** One request; resolves {status, body: Buffer}. `chunked` omits content-length. */
function request(agent, base, pathname, { body = null, type = null, chunked = false } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(pathname, base);
    const headers = { accept: "*/*", "user-agent": "strata-rest-bench" };
    if (type) headers["content-type"] = type;
    if (body && !chunked) headers["content-length"] = body.length;
    const req = http.request(
      { agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method: "POST", headers },
      (res) => {
        const parts = [];
        res.on("data", (c) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (body) req.end(body);
    else req.end();
  });
}

async function mustOk(p, what) {
  const r = await p;
  if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 500)}`);
  return r;
}

// ---------------------------------------------------------------- measurement
const CLK_TCK = 100; // Linux USER_HZ; /proc/<pid>/stat times are in these ticks

function cpuTicks(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" "); // fields from 3 (state) on
  return Number(f[11]) + Number(f[12]); // utime (14) + stime (15)
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * Runs one cell: `conns` closed loops of `next()` requests for warmup + seconds.
 * `next(i)` returns {path, body, type, chunked, rows}.
 */
async function runCell({ base, pid, conns, seconds, warmup, next, check }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: conns, maxFreeSockets: conns });
  const t0 = performance.now();
  const measureStart = t0 + warmup * 1000;
  const measureEnd = measureStart + seconds * 1000;
  let cpuStart = null;
  let clientCpuStart = null;
  const lat = [];
  let rows = 0;
  let errors = 0;
  let firstError = null;
  let inflightAtEnd = 0;
  let seq = 0;
  const cpuTimer = setTimeout(
    () => {
      cpuStart = { ticks: cpuTicks(pid), at: performance.now() };
      clientCpuStart = process.cpuUsage();
    },
    Math.max(0, measureStart - performance.now()),
  );
  let cpuEnd = null;
  let clientCpu = null;
  let endSampled;
  const ended = new Promise((resolve) => (endSampled = resolve));
  const endTimer = setTimeout(
    () => {
      cpuEnd = { ticks: cpuTicks(pid), at: performance.now() };
      clientCpu = process.cpuUsage(clientCpuStart ?? undefined);
      endSampled();
    },
    Math.max(0, measureEnd - performance.now()),
  );
  async function loop() {
    while (performance.now() < measureEnd) {
      const r = next(seq++);
      const s = performance.now();
      let ok = false;
      try {
        const res = await request(agent, base, r.path, r);
        ok = res.status === 200 && (!check || check(res));
        if (!ok && !firstError) firstError = `HTTP ${res.status} ${res.body.toString().slice(0, 300)}`;
      } catch (e) {
        if (!firstError) firstError = e.message;
      }
      const e = performance.now();
      if (e >= measureStart && e <= measureEnd) {
        if (ok) {
          lat.push(e - s);
          rows += r.rows || 0;
        } else errors++;
      } else if (e > measureEnd) inflightAtEnd++;
    }
  }
  await Promise.all(Array.from({ length: conns }, loop));
  await ended; // the loops may see the deadline a little before the timer fires
  agent.destroy();
  if (!cpuStart || !cpuEnd) throw new Error("cell ended before its CPU samples were taken");
  const wall = (cpuEnd.at - cpuStart.at) / 1000;
  lat.sort((a, b) => a - b);
  return {
    requests: lat.length,
    errors,
    first_error: firstError,
    dropped_in_flight: inflightAtEnd,
    seconds: wall,
    req_per_s: lat.length / wall,
    rows_per_s: rows / wall,
    p50_ms: percentile(lat, 50),
    p99_ms: percentile(lat, 99),
    max_ms: lat.length ? lat[lat.length - 1] : NaN,
    server_cpu_cores: (cpuEnd.ticks - cpuStart.ticks) / CLK_TCK / wall,
    client_cpu_cores: (clientCpu.user + clientCpu.system) / 1e6 / wall,
  };
}

// ---------------------------------------------------------------- setup
const TABLE = "bench";

async function setupTable(srv, data, baseRows) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = srv.url;
  // Empty table (schema + one 0-row batch, as createEmptyTable sends it), then both indexes.
  await mustOk(
    request(agent, base, `/v1/table/${TABLE}/create/?mode=create`, { body: data.ipc(0), type: ARROW, chunked: true }),
    "create/",
  );
  await mustOk(
    request(agent, base, `/v1/table/${TABLE}/create_index/`, {
      body: Buffer.from(
        sortedJson({
          column: "vector",
          index_type: "IVF_HNSW_SQ",
          metric_type: "l2",
          m: 16,
          ef_construction: 100,
          sample_rate: 256,
          max_iterations: 50,
        }),
      ),
      type: "application/json",
    }),
    "create_index/ vector",
  );
  await mustOk(
    request(agent, base, `/v1/table/${TABLE}/create_index/`, {
      body: Buffer.from(
        sortedJson({
          column: "text",
          index_type: "FTS",
          base_tokenizer: "simple",
          language: "English",
          with_position: false,
          max_token_length: 40,
          lower_case: true,
          stem: true,
          remove_stop_words: true,
          ascii_folding: true,
          min_ngram_length: 3,
          max_ngram_length: 3,
          prefix_only: false,
          custom_stop_words: null,
          lance_tokenizer: null,
        }),
      ),
      type: "application/json",
    }),
    "create_index/ text",
  );
  const t = performance.now();
  for (let done = 0; done < baseRows; done += 1000) {
    await mustOk(
      request(agent, base, `/v1/table/${TABLE}/insert/`, {
        body: data.ipc(Math.min(1000, baseRows - done)),
        type: ARROW,
        chunked: true,
      }),
      "insert/ (base rows)",
    );
  }
  const loadS = (performance.now() - t) / 1000;
  agent.destroy();
  return loadS;
}

async function countRows(base) {
  const agent = new http.Agent({ keepAlive: false });
  const r = await mustOk(
    request(agent, base, `/v1/table/${TABLE}/count_rows/`, { body: Buffer.from('{"version":null}'), type: "application/json" }),
    "count_rows/",
  );
  return Number(r.body.toString());
}

/** Checks one vector and one FTS answer with apache-arrow before measuring anything. */
async function sanityCheck(base, vecBody, ftsBody) {
  const agent = new http.Agent({ keepAlive: false });
  const v = await mustOk(request(agent, base, `/v1/table/${TABLE}/query/`, { body: vecBody, type: "application/json" }), "vector query/");
  const vt = A.tableFromIPC(v.body);
  if (vt.numRows !== 10 || !vt.schema.fields.some((f) => f.name === "_distance"))
    throw new Error(`vector query returned ${vt.numRows} rows, columns ${vt.schema.fields.map((f) => f.name)}`);
  const f = await mustOk(request(agent, base, `/v1/table/${TABLE}/query/`, { body: ftsBody, type: "application/json" }), "FTS query/");
  const ft = A.tableFromIPC(f.body);
  if (ft.numRows < 1 || !ft.schema.fields.some((x) => x.name === "_score"))
    throw new Error(`FTS query returned ${ft.numRows} rows, columns ${ft.schema.fields.map((x) => x.name)}`);
  return { vectorRows: vt.numRows, ftsRows: ft.numRows };
}

// ---------------------------------------------------------------- main
async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const data = new Data(opts);

  // Pre-built request bodies, so the client does no Arrow/JSON work while measuring.
  const qrand = rng(opts.seed + 1);
  const vecBodies = Array.from({ length: 512 }, () => Buffer.from(vectorQueryBody(randomVector(qrand, opts.dim))));

  const extraArgs = opts.threads ? ["--threads", String(opts.threads)] : [];
  const servers = [];
  const results = [];
  const meta = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    note: "client and server share this machine's cores",
    options: opts,
  };
  try {
    const srv = new StrataServer({ bin: opts.bin, extraArgs });
    servers.push(srv);
    await srv.start();
    console.log(`strata ${srv.bin} (pid ${srv.child.pid}) on ${srv.url}, data ${srv.dataDir}`);
    const loadS = await setupTable(srv, data, opts.baseRows);
    meta.base_rows = await countRows(srv.url);
    meta.base_load_s = loadS;
    if (meta.base_rows !== opts.baseRows) throw new Error(`count_rows/ = ${meta.base_rows}, expected ${opts.baseRows}`);
    console.log(
      `base: ${meta.base_rows} rows (dim ${opts.dim}, HNSW + FTS indexes) loaded in ${loadS.toFixed(1)} s ` +
        `(${Math.round(meta.base_rows / loadS)} rows/s with 1,000-row inserts at 1 connection)`,
    );
    const ftsBodies = Array.from({ length: 512 }, () => Buffer.from(ftsQueryBody(data.ftsQuery(opts.baseRows))));
    meta.sanity = await sanityCheck(srv.url, vecBodies[0], ftsBodies[0]);
    meta.fts_query_examples = ftsBodies.slice(0, 5).map((b) => JSON.parse(b).full_text_query.query);

    const ones = Array.from({ length: 2048 }, () => data.ipc(1));
    const thousands = Array.from({ length: 16 }, () => data.ipc(1000));
    const insertPath = `/v1/table/${TABLE}/insert/`;
    const queryPath = `/v1/table/${TABLE}/query/`;
    const gen = {
      insert_1: (i) => ({ path: insertPath, body: ones[i % ones.length], type: ARROW, chunked: true, rows: 1 }),
      insert_1000: (i) => ({ path: insertPath, body: thousands[i % thousands.length], type: ARROW, chunked: true, rows: 1000 }),
      vector_k10: (i) => ({ path: queryPath, body: vecBodies[i % vecBodies.length], type: "application/json" }),
      fts_k10: (i) => ({ path: queryPath, body: ftsBodies[i % ftsBodies.length], type: "application/json" }),
    };
    // Arrow IPC file answers start with the ARROW1 magic.
    const isArrowFile = (res) => res.body.length > 6 && res.body.subarray(0, 6).toString() === "ARROW1";
    const order = ["vector_k10", "fts_k10", "insert_1", "insert_1000"].filter((w) => opts.workloads.includes(w));

    const runAll = async (server, workloads, label) => {
      for (const w of workloads) {
        for (const c of opts.conns) {
          const rowsBefore = await countRows(server.url);
          const r = await runCell({
            base: server.url,
            pid: server.child.pid,
            conns: c,
            seconds: opts.seconds,
            warmup: opts.warmup,
            next: gen[w],
            check: w.startsWith("insert") ? null : isArrowFile,
          });
          const row = { workload: w + label, connections: c, table_rows_before: rowsBefore, ...r };
          results.push(row);
          console.log(
            `  ${row.workload.padEnd(18)} c=${String(c).padStart(3)}  ${fmt(row.req_per_s, 1).padStart(8)} req/s  ` +
              `p50 ${fmt(row.p50_ms, 2)} ms  p99 ${fmt(row.p99_ms, 2)} ms  server ${fmt(row.server_cpu_cores, 2)} cores` +
              (row.errors ? `  ERRORS ${row.errors}: ${row.first_error}` : ""),
          );
        }
      }
    };
    await runAll(srv, order, "");
    meta.final_rows = await countRows(srv.url);

    if (opts.tmpfs && opts.workloads.includes("insert_1") && fs.existsSync("/dev/shm")) {
      // Same 1-row inserts against a server whose WAL lives on tmpfs (fsync is nearly free).
      const dir = fs.mkdtempSync("/dev/shm/strata-bench-");
      const srv2 = new StrataServer({ bin: opts.bin, extraArgs, dataDir: dir });
      servers.push(srv2);
      await srv2.start();
      const d2 = new Data({ ...opts });
      await setupTable(srv2, d2, opts.baseRows);
      console.log(`tmpfs comparison server on ${srv2.url}, data ${dir}`);
      await runAll(srv2, ["insert_1"], " (tmpfs)");
      await srv2.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    for (const s of servers) await s.cleanup();
  }
  meta.total_s = (performance.now() - started) / 1000;
  printTable(results, meta, opts);
  if (opts.json) {
    fs.writeFileSync(opts.json, JSON.stringify({ meta, results }, null, 2));
    console.log(`wrote ${opts.json}`);
  }
}

function fmt(x, d) {
  return Number.isFinite(x) ? x.toFixed(d) : "-";
}

function printTable(results, meta, opts) {
  const order = ["insert_1", "insert_1000", "vector_k10", "fts_k10", "insert_1 (tmpfs)"];
  const rows = [...results].sort(
    (a, b) => order.indexOf(a.workload) - order.indexOf(b.workload) || a.connections - b.connections,
  );
  const head = ["workload", "conns", "requests", "req/s", "rows/s", "p50 ms", "p99 ms", "server CPU cores", "client CPU cores", "errors"];
  const body = rows.map((r) => [
    r.workload,
    String(r.connections),
    String(r.requests),
    fmt(r.req_per_s, 1),
    r.workload.startsWith("insert") ? fmt(r.rows_per_s, 0) : "",
    fmt(r.p50_ms, 2),
    fmt(r.p99_ms, 2),
    fmt(r.server_cpu_cores, 2),
    fmt(r.client_cpu_cores, 2),
    String(r.errors),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => "| " + cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join(" | ") + " |";
  console.log("");
  console.log(
    `Strata REST benchmark: ${opts.seconds} s per cell after ${opts.warmup} s warmup; table of ` +
      `${meta.base_rows} base rows (dim ${opts.dim} HNSW + FTS), ${meta.final_rows} rows after the insert cells.`,
  );
  console.log(
    `NOTE: the client (this Node process) runs on the same ${meta.machine.cpus}-core machine as the server ` +
      `and competes with it for CPU (client CPU column). Inserts are durable (WAL fsync before the answer).`,
  );
  console.log(line(head));
  console.log("|" + w.map((n, i) => (i === 0 ? "-".repeat(n + 2) : "-".repeat(n + 1) + ":")).join("|") + "|");
  for (const b of body) console.log(line(b));
  console.log(`total ${meta.total_s.toFixed(0)} s`);
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
