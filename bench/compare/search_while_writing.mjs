// Workload 6 of `make bench-compare`: search while writing (`--only sww`).
//
// Data: seeded synthetic 128-d float32 vectors in 256 Gaussian clusters (centres uniform in
// [-1, 1)^128, points = centre + N(0, 0.25^2) per dimension; mulberry32 + Box-Muller), int64 `id`.
// Every stream is deterministic, so both systems get the same rows, queries and writes.
//
// Each system gets its own store (Strata: a dedicated `strata serve` process with --server-args, so its RSS is this
// workload's alone; LanceDB: its own directory) and ONE table that grows through the size points
// (default 50,000, 500,000 and 1,000,000 rows; --quick 20,000; `--sww-rows a,b,c`):
// - Strata: `createEmptyTable` with `id` declared as primary key (field metadata
//   `lance-schema:unenforced-primary-key` = `true`, README "Primary keys"), then
//   `createIndex("vector", Index.hnswSq({m: 16, efConstruction: 100}))` on the EMPTY table, so the
//   HNSW graphs are maintained while writing; then the 1,000-row `add`s.
// - LanceDB OSS: a plain table (no key), the 1,000-row `add`s, then at every size point
//   `createIndex("vector", Index.ivfPq())` (client defaults, replace) + `waitForIndex`.
// All writes on both systems are `add` (append) of ids never used before, so a primary-key
// upsert and an append do the same thing; no mergeInsert.
// Rows written by phases (b) and (c) stay in the table: the next size point has a few thousand
// more rows than its nominal size (`table_rows` reports the count).
//
// At each size point, with one searching client (connection S: Strata a second remote
// connection, LanceDB `connect(dir, {readConsistencyInterval: 0})`), k = 10, select id and
// _distance, fresh query vectors drawn from the clusters (the same set at every size):
// (a) idle: `queries` searches one after the other (after an unmeasured warm-up of 100), cycling
//     through the query set again until the phase has lasted at least 5 s; p50 / p99.
// (b) while writing: the same searches again (also at least 5 s, so the writer adds about 1,000
//     rows even when the searches are fast) while a third connection W adds one new row every
//     5 ms: row n is due at start + 5n ms, one add in flight at a time (an add that is late is
//     sent as soon as the previous one is acknowledged, never concurrently), so a system whose add
//     takes longer than 5 ms falls short of 200 rows/s and its achieved rows/s shows it. The
//     writer runs from just before the first search to the end of the last. Reports p50 / p99,
//     searches, rows the writer added, its rows/s, its add latency, errors.
// (c) read-after-write: `queries` times, S adds one row (a new id, a fresh vector drawn from the
//     clusters), then at once searches for exactly that vector with k = 1 on the same table
//     handle; a returned id other than the one just written is a miss (a freshness failure).
//     p50 / p99 of the whole add + search pair; the first misses are kept as examples.
// Each of (a), (b), (c) stops early once it has run `--sww-budget` seconds (default 120; --quick 5):
// without it LanceDB's phase (b) feeds on itself (every new single-row fragment makes the next
// search slower, so the phase lasts longer and the writer adds more fragments: 3 minutes and
// 6,388 rows for 200 searches at 20,000 rows in a trial). The searches / pairs done are reported.
// Also: RSS (VmRSS of /proc/PID/status) before (a) and after (c): the Strata server process for
// Strata; for LanceDB the Node process that embeds it (which also runs this driver).
import fs from "node:fs";
import os from "node:os";
import { rng } from "../../tests/e2e/lib/vectors.mjs";
import { strataIndex } from "./ingest.mjs";

export const DIM = 128;
export const CLUSTERS = 256;
export const SIGMA = 0.25;
export const LOAD_BATCH = 1000;
export const WRITE_INTERVAL_MS = 5;
/** Phases (a) and (b) last at least this long (cycling through the queries): (b)'s writer adds ~1,000 rows. */
export const PHASE_MIN_MS = 5000;
export const DEFAULT_ROWS = [50000, 500000, 1000000];
export const QUICK_ROWS = [20000];
const SEED = 0x5357; // "SW"
const TABLE = "sww";
const WRITER_ID_BASE = 100_000_000;
const RAW_ID_BASE = 200_000_000;
const MISS_EXAMPLES = 5;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function stats(lat) {
  const s = lat.slice().sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1],
    mean: s.reduce((x, y) => x + y, 0) / s.length };
}

/** The 256 cluster centres, uniform in [-1, 1)^DIM (Float32Array of CLUSTERS * DIM). */
function centres() {
  const rand = rng(SEED);
  const c = new Float32Array(CLUSTERS * DIM);
  for (let i = 0; i < c.length; i++) c[i] = rand() * 2 - 1;
  return c;
}

/**
 * A deterministic stream of clustered vectors: next(out, offset) writes one DIM vector into the
 * Float32Array `out` at `offset` (a random cluster's centre plus N(0, SIGMA^2) noise).
 */
export function clusteredStream(seed, centre = centres()) {
  const rand = rng(seed);
  let spare = null;
  const gauss = () => {
    if (spare !== null) {
      const g = spare;
      spare = null;
      return g;
    }
    let u = rand();
    while (u === 0) u = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    const t = 2 * Math.PI * rand();
    spare = r * Math.sin(t);
    return r * Math.cos(t);
  };
  return {
    next(out, offset = 0) {
      const c = Math.floor(rand() * CLUSTERS) * DIM;
      for (let j = 0; j < DIM; j++) out[offset + j] = centre[c + j] + SIGMA * gauss();
    },
  };
}

function schema(arrow, primaryKey) {
  const meta = primaryKey ? new Map([["lance-schema:unenforced-primary-key", "true"]]) : undefined;
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false, meta),
    new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
}

/** One record batch of `schema` from ids (BigInt64Array) and row-major vectors (Float32Array). */
function batch(arrow, sch, ids, values) {
  const n = ids.length;
  const [idF, vecF] = sch.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * DIM, nullCount: 0, data: values });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(sch.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(sch, struct)]);
}

/** A single new row (id, fresh vector from `stream`); returns {table, vector (plain array)}. */
function oneRow(arrow, sch, stream, id) {
  const v = new Float32Array(DIM);
  stream.next(v);
  return { table: batch(arrow, sch, BigInt64Array.of(BigInt(id)), v), vector: Array.from(v) };
}

/** VmRSS of process `pid` in KiB (null when unreadable). */
export function rssKiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const search = (table, v, k) => table.vectorSearch(v).limit(k).select(["id", "_distance"]).toArray();

/**
 * Searches `queries` one after the other, cycling through them again until `minMs` have passed;
 * stops early once `budgetMs` have passed (at least one search).
 */
async function searchLoop(table, queries, budgetMs = Infinity, minMs = 0) {
  const lat = [];
  const start = performance.now();
  for (let i = 0; ; i++) {
    const t0 = performance.now();
    if (i > 0 && t0 - start > budgetMs) break;
    if (i >= queries.length && t0 - start >= minMs) break;
    await search(table, queries[i % queries.length], 10);
    lat.push(performance.now() - t0);
  }
  return lat;
}

/** The per-system state kept across size points. */
function newStreams() {
  const c = centres();
  return {
    load: clusteredStream(SEED + 1, c),
    writer: clusteredStream(SEED + 3, c),
    raw: clusteredStream(SEED + 4, c),
    centre: c,
    loaded: 0,
    writerNext: WRITER_ID_BASE,
    rawNext: RAW_ID_BASE,
  };
}

async function load(ctx, sys, table, sch, st, upTo) {
  const { arrow, log } = ctx;
  const t0 = performance.now();
  let lastLog = t0;
  const from = st.loaded;
  while (st.loaded < upTo) {
    const n = Math.min(LOAD_BATCH, upTo - st.loaded);
    const ids = new BigInt64Array(n);
    const values = new Float32Array(n * DIM);
    for (let i = 0; i < n; i++) {
      ids[i] = BigInt(st.loaded + i);
      st.load.next(values, i * DIM);
    }
    await table.add(batch(arrow, sch, ids, values));
    st.loaded += n;
    const now = performance.now();
    if (now - lastLog > 10000) {
      log(`  sww ${sys.system}: loaded ${st.loaded}/${upTo} rows, ${(((st.loaded - from) / (now - t0)) * 1000).toFixed(0)} rows/s`);
      lastLog = now;
    }
  }
  return (performance.now() - t0) / 1000;
}

async function point(ctx, sys, h, st, rows, queries, budgetMs, rssPid) {
  const { arrow, log, lancedb } = ctx;
  const loadAvg = Math.round(os.loadavg()[0] * 100) / 100;
  log(`sww ${sys.system} ${rows} rows: loading ${rows - st.loaded} rows in ${LOAD_BATCH}-row batches ` +
    `(load ${loadAvg})`);
  const loadS = await load(ctx, sys, h.loader, h.schema, st, rows);
  const i0 = performance.now();
  if (sys.system === "strata") {
    await h.loader.waitForIndex(["vector_idx"], 3600);
  } else {
    await h.loader.createIndex("vector", { config: lancedb.Index.ivfPq(), replace: true });
    await h.loader.waitForIndex(["vector_idx"], 3600);
  }
  const indexS = (performance.now() - i0) / 1000;
  const tableRows = await h.search.countRows();
  log(`  sww ${sys.system}: ${tableRows} rows; load ${loadS.toFixed(1)} s, index ${indexS.toFixed(2)} s`);

  // The same query set at every size point: fresh draws from the clusters.
  const qs = clusteredStream(SEED + 2, st.centre);
  const qv = new Float32Array(DIM);
  const qvecs = [];
  for (let i = 0; i < queries; i++) {
    qs.next(qv);
    qvecs.push(Array.from(qv));
  }
  const rssStart = rssKiB(rssPid);

  // (a) idle
  await searchLoop(h.search, qvecs.slice(0, Math.min(100, queries))); // warm-up
  const idleLat = await searchLoop(h.search, qvecs, budgetMs, PHASE_MIN_MS);
  const idle = stats(idleLat);
  log(`  sww ${sys.system} idle: p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms`);

  // (b) while a second connection adds a row every WRITE_INTERVAL_MS
  let stop = false;
  let written = 0;
  let errors = 0;
  let firstError = null;
  const addLat = [];
  const writer = (async () => {
    const wStart = performance.now();
    for (let n = 0; !stop; n++) {
      const wait = wStart + n * WRITE_INTERVAL_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (stop) break;
      const start = performance.now();
      const row = oneRow(arrow, h.schema, st.writer, st.writerNext++);
      try {
        await h.writer.add(row.table);
        written++;
        addLat.push(performance.now() - start);
      } catch (e) {
        errors++;
        firstError ??= e.message;
      }
    }
  })();
  const w0 = performance.now();
  let writingLat;
  try {
    writingLat = await searchLoop(h.search, qvecs, budgetMs, PHASE_MIN_MS);
  } finally {
    stop = true;
    await writer;
  }
  const wSeconds = (performance.now() - w0) / 1000;
  const writing = stats(writingLat);
  const add = stats(addLat);
  if (firstError) log(`  sww ${sys.system} writer error (first of ${errors}): ${firstError}`);
  log(`  sww ${sys.system} while writing: ${writingLat.length} searches, p50 ${writing.p50.toFixed(2)} ms, p99 ${writing.p99.toFixed(2)} ms; ` +
    `writer added ${written} rows (${(written / wSeconds).toFixed(0)} rows/s, add p50 ${add.p50.toFixed(2)} ms), ${errors} errors`);

  // (c) read-after-write on one table handle
  const pair = [];
  const addMs = [];
  const searchMs = [];
  let misses = 0;
  const missExamples = [];
  const rawStart = performance.now();
  for (let i = 0; i < queries && (i === 0 || performance.now() - rawStart <= budgetMs); i++) {
    const id = st.rawNext++;
    const row = oneRow(arrow, h.schema, st.raw, id);
    const t0 = performance.now();
    await h.search.add(row.table);
    const t1 = performance.now();
    const got = await search(h.search, row.vector, 1);
    const t2 = performance.now();
    pair.push(t2 - t0);
    addMs.push(t1 - t0);
    searchMs.push(t2 - t1);
    const gotId = got.length ? Number(got[0].id) : null;
    if (gotId !== id) {
      misses++;
      if (missExamples.length < MISS_EXAMPLES) {
        missExamples.push({ written_id: id, returned_id: gotId, returned_distance: got.length ? got[0]._distance : null,
          rows_returned: got.length, pair_index: i, vector: row.vector });
      }
    }
  }
  const raw = stats(pair);
  // Each kept miss, looked at again after the loop: is the row there, does the same k = 1 search
  // find it now, where is it in a k = 10 / k = 100 answer, and does a flat (index-bypassing)
  // search find it. Tells a visibility failure from an index (recall) failure.
  for (const m of missExamples) {
    const v = m.vector;
    delete m.vector;
    const rank = (rows) => rows.findIndex((r) => Number(r.id) === m.written_id);
    try {
      m.rows_with_id_after = await h.search.countRows(`id = ${m.written_id}`);
      m.retry_k1_id = Number((await search(h.search, v, 1))[0]?.id ?? NaN);
      m.rank_in_k10 = rank(await search(h.search, v, 10));
      m.rank_in_k100 = rank(await search(h.search, v, 100));
      m.flat_k1_id = Number((await h.search.vectorSearch(v).bypassVectorIndex().limit(1).select(["id"]).toArray())[0]?.id ?? NaN);
    } catch (e) {
      m.diagnosis_error = e.message;
    }
  }
  const rssEnd = rssKiB(rssPid);
  log(`  sww ${sys.system} read-after-write: p50 ${raw.p50.toFixed(2)} ms, p99 ${raw.p99.toFixed(2)} ms, ` +
    `${misses}/${pair.length} misses; RSS ${rssStart} -> ${rssEnd} KiB`);
  if (misses) log(`  sww ${sys.system} MISSES (first ${missExamples.length}): ${JSON.stringify(missExamples)}`);

  return {
    system: sys.system,
    rows,
    table_rows: tableRows,
    index: sys.system === "strata" ? "HNSW (maintained), primary key id" : "IVF_PQ (built after loading)",
    load_seconds: loadS,
    index_seconds: indexS,
    queries,
    budget_seconds: budgetMs / 1000,
    load_avg_1m: loadAvg, // 1-minute load average when the size point started
    idle_queries: idleLat.length,
    idle_p50_ms: idle.p50,
    idle_p99_ms: idle.p99,
    idle_mean_ms: idle.mean,
    writing_queries: writingLat.length,
    writing_p50_ms: writing.p50,
    writing_p99_ms: writing.p99,
    writing_mean_ms: writing.mean,
    writing_over_idle_p50: writing.p50 / idle.p50,
    writer_rows: written,
    writer_seconds: wSeconds,
    writer_rows_per_s: written / wSeconds,
    writer_target_rows_per_s: 1000 / WRITE_INTERVAL_MS,
    writer_add_p50_ms: add.p50,
    writer_add_p99_ms: add.p99,
    writer_add_mean_ms: add.mean,
    writer_add_max_ms: add.max,
    writer_errors: errors,
    writer_first_error: firstError,
    raw_pairs: pair.length,
    raw_p50_ms: raw.p50,
    raw_p99_ms: raw.p99,
    raw_max_ms: raw.max,
    raw_add_p50_ms: stats(addMs).p50,
    raw_search_p50_ms: stats(searchMs).p50,
    raw_misses: misses,
    raw_miss_examples: missExamples,
    rss_start_kib: rssStart,
    rss_end_kib: rssEnd,
    rss_process: sys.system === "strata" ? "strata serve" : "node (driver + embedded LanceDB)",
  };
}

/** Ratio summaries per system (the targets Strata sets itself); also used by main and report. */
export function swwSummary(runs) {
  const out = [];
  for (const system of [...new Set(runs.map((r) => r.system))]) {
    const rs = runs.filter((r) => r.system === system).sort((a, b) => a.rows - b.rows);
    const top = rs[rs.length - 1];
    const base = rs.find((r) => r.rows === 50000 && r !== top) ?? rs[0];
    out.push({
      system,
      max_writing_over_idle_p50: Math.max(...rs.map((r) => r.writing_over_idle_p50)),
      max_raw_p99_ms: Math.max(...rs.map((r) => r.raw_p99_ms)),
      raw_p50_growth: rs.length > 1 && top !== base ? top.raw_p50_ms / base.raw_p50_ms : null,
      raw_p50_growth_rows: rs.length > 1 && top !== base ? [base.rows, top.rows] : null,
      raw_misses: rs.reduce((s, r) => s + r.raw_misses, 0),
    });
  }
  return out;
}

/** Runs the search-while-writing workload; returns the `sww` object of results.json. */
export async function run(ctx) {
  const { opts, lancedb, arrow, log } = ctx;
  const sizes = [...new Set(opts.swwRows ?? (opts.quick ? QUICK_ROWS : DEFAULT_ROWS))].sort((a, b) => a - b);
  const queries = opts.swwQueries ?? (opts.quick ? 200 : 1000);
  const budgetMs = (opts.swwBudgetSeconds ?? (opts.quick ? 5 : 120)) * 1000;
  const runs = [];
  const rssServerStart = {};
  for (const which of opts.swwSystems ?? ["strata", "lancedb"]) { // swwSystems: for ad-hoc runs only
    const sys = which === "strata" ? await ctx.openStrata("strata-sww") : await ctx.openLance("lancedb-sww");
    try {
      const pk = which === "strata";
      const sch = schema(arrow, pk);
      const rssPid = which === "strata" ? sys.server.child.pid : process.pid;
      rssServerStart[which] = rssKiB(rssPid);
      const loader = await sys.db.createEmptyTable(TABLE, sch);
      if (pk) {
        const meta = (await loader.schema()).fields[0].metadata;
        if (meta?.get("lance-schema:unenforced-primary-key") !== "true") {
          throw new Error(`strata ${TABLE}: id is not reported as primary key (schema metadata ${JSON.stringify([...(meta ?? [])])})`);
        }
        await loader.createIndex("vector", { config: strataIndex(lancedb) });
      }
      const connS = await sys.connect();
      const connW = await sys.connect();
      const h = { schema: sch, loader, search: await connS.openTable(TABLE), writer: await connW.openTable(TABLE) };
      const st = newStreams();
      for (const rows of sizes) runs.push(await point(ctx, sys, h, st, rows, queries, budgetMs, rssPid));
    } finally {
      await sys.close(); // frees the memory before the other system loads
    }
  }
  return {
    params: {
      sizes,
      queries,
      budget_seconds: budgetMs / 1000,
      dim: DIM,
      clusters: CLUSTERS,
      sigma: SIGMA,
      load_batch: LOAD_BATCH,
      write_interval_ms: WRITE_INTERVAL_MS,
      phase_min_seconds: PHASE_MIN_MS / 1000,
      k: 10,
      strata: "createEmptyTable with primary key id, Index.hnswSq({m: 16, efConstruction: 100}) before loading",
      lancedb: "plain table, add, then Index.ivfPq() defaults + waitForIndex at every size point",
      writes: "add (new ids) on both systems",
    },
    rss_server_start_kib: rssServerStart,
    runs,
    summary: swwSummary(runs),
  };
}
