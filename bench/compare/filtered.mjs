// Workload `filtered` of `make bench-compare` (issue 20; `--only filtered`, also run by
// `make bench-query`): filtered vector search at several selectivities, Strata against LanceDB
// OSS (its prefilter), same rows, same client (@lancedb/lancedb 0.31), same queries.
//
// Data: `--filtered-rows` rows (default 200,000; --quick 20,000): `id` int64 = row number,
// `tag` int32 uniform in [0, 1000) (mulberry32 `rng` of tests/e2e/lib/vectors.mjs, fixed seed),
// `vector` 128-d float32 from search_while_writing.mjs's clusteredStream (256 Gaussian clusters,
// fixed seed). Loaded with 1,000-row `add`s. The rows are generated once and kept in this process
// (Float32Array) for the exact ground truth.
// Indexes, each system at its documented practice (as in the ingest / sww workloads):
// - Strata: createEmptyTable with `id` as primary key (field metadata
//   `lance-schema:unenforced-primary-key` = `true`), then on the EMPTY table
//   createIndex("vector", Index.hnswSq({m: 16, efConstruction: 100})) and
//   createIndex("tag", Index.btree()); the adds; then flush/ and compact/ (repeated until no
//   SSTable is left and the base holds every row; ivfpq.mjs strataCompactAll), so the rows sit
//   in the indexed base table, as in filtered_search_bench's base layout.
// - LanceDB OSS: a plain table, the adds, then createIndex("vector", Index.hnswSq()) (the
//   client's defaults) and createIndex("tag", Index.btree()), waitForIndex on both.
// Queries: 300 fresh vectors from the same clusters (another seed), k = 10,
// `table.vectorSearch(v).where(filter).limit(10).select(["id"]).toArray()` with the filters none,
// `tag < 500` (50%), `tag < 100` (10%), `tag < 10` (1%), `tag = 7` (0.1%). Prefilter on both:
// it is the client's default (0.31 has postfilter() and no prefilter() method) and postfilter()
// is never called; the plan of the first query per filter is kept (explain_plan).
// Timed: per system, 3 passes; in each pass every filter in the order above gets an unmeasured
// warm-up of 30 queries, then all 300 one after the other from one client (q/s = 300 / wall
// seconds of the 300; per-query latency). Reported per filter: median q/s of the 3 passes, its
// ratio to the same system's unfiltered median q/s, p50 latency over the 900 timed queries, and
// recall@10 of the first pass's answers against exact ground truth with the same filter (brute
// force l2 in this process over the rows that pass; a returned row counts as a hit when its
// exact distance is <= the 10th exact distance, so ties count; a returned row that fails the
// filter is counted in filter_violations and is not a hit).
import { rng } from "../../tests/e2e/lib/vectors.mjs";
import { DIM, LOAD_BATCH, clusteredStream } from "./search_while_writing.mjs";
import { strataIndex } from "./ingest.mjs";
import { strataCompactAll } from "./ivfpq.mjs";

export const DEFAULT_ROWS = 200000;
export const QUICK_ROWS = 20000;
const QUERIES = 300;
const WARMUP = 30;
const PASSES = 3;
const K = 10;
const TAGS = 1000;
const SEED = 0x4654; // "FT"
const TABLE = "filtered";

/** The filters, in the order of a pass; `pass(tag)` is the same predicate in JS. */
export const FILTERS = [
  { label: "none", where: null, pass: () => true },
  { label: "tag < 500", where: "tag < 500", pass: (t) => t < 500 },
  { label: "tag < 100", where: "tag < 100", pass: (t) => t < 100 },
  { label: "tag < 10", where: "tag < 10", pass: (t) => t < 10 },
  { label: "tag = 7", where: "tag = 7", pass: (t) => t === 7 },
];

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const median = (xs) => percentile(xs.slice().sort((a, b) => a - b), 50);

function schema(arrow, primaryKey) {
  const meta = primaryKey ? new Map([["lance-schema:unenforced-primary-key", "true"]]) : undefined;
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false, meta),
    new arrow.Field("tag", new arrow.Int32(), false),
    new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
}

/** Rows [from, to) of `data` as one record batch of `sch` (search_while_writing.mjs's pattern). */
function batch(arrow, sch, data, from, to) {
  const n = to - from;
  const [idF, tagF, vecF] = sch.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * DIM, nullCount: 0,
    data: data.vectors.subarray(from * DIM, to * DIM) });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: data.ids.subarray(from, to) }),
    arrow.makeData({ type: tagF.type, length: n, nullCount: 0, data: data.tags.subarray(from, to) }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(sch.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(sch, struct)]);
}

/** The rows and queries (deterministic). */
function generate(rows) {
  const ids = new BigInt64Array(rows);
  const tags = new Int32Array(rows);
  const vectors = new Float32Array(rows * DIM);
  const tagRand = rng(SEED);
  const load = clusteredStream(SEED + 1);
  for (let i = 0; i < rows; i++) {
    ids[i] = BigInt(i);
    tags[i] = Math.floor(tagRand() * TAGS);
    load.next(vectors, i * DIM);
  }
  const qs = clusteredStream(SEED + 2);
  const queries = new Float32Array(QUERIES * DIM);
  for (let q = 0; q < QUERIES; q++) qs.next(queries, q * DIM);
  return { rows, ids, tags, vectors, queries };
}

function l2(a, ai, b, bi) {
  let s = 0;
  for (let j = 0; j < DIM; j++) {
    const d = a[ai + j] - b[bi + j];
    s += d * d;
  }
  return s;
}

/**
 * Exact top-K per query and filter: truth[f][q] = {ids, kth} (kth = the K-th smallest distance
 * among the passing rows, Infinity when fewer than K pass). One distance pass per query.
 */
function groundTruth(data) {
  const { rows, tags, vectors, queries } = data;
  const dist = new Float64Array(rows);
  const passing = FILTERS.map((f) => {
    const m = new Uint8Array(rows);
    for (let i = 0; i < rows; i++) m[i] = f.pass(tags[i]) ? 1 : 0;
    return m;
  });
  const truth = FILTERS.map(() => []);
  for (let q = 0; q < QUERIES; q++) {
    for (let i = 0; i < rows; i++) dist[i] = l2(queries, q * DIM, vectors, i * DIM);
    for (let f = 0; f < FILTERS.length; f++) {
      const m = passing[f];
      const top = []; // ascending by distance, at most K
      for (let i = 0; i < rows; i++) {
        if (!m[i]) continue;
        const d = dist[i];
        if (top.length === K && d >= top[K - 1].d) continue;
        let p = top.length < K ? top.length : K - 1;
        while (p > 0 && top[p - 1].d > d) p--;
        top.splice(p, 0, { i, d });
        if (top.length > K) top.pop();
      }
      truth[f].push({ ids: top.map((e) => e.i), kth: top.length === K ? top[K - 1].d : Infinity });
    }
  }
  const passingRows = passing.map((m) => m.reduce((s, x) => s + x, 0));
  return { truth, passingRows };
}

/** recall@K of `answers` (arrays of ids per query) for filter f; also counts filter violations. */
function recall(data, gt, f, answers) {
  let hit = 0;
  let total = 0;
  let violations = 0;
  let short = 0;
  for (let q = 0; q < QUERIES; q++) {
    const t = gt.truth[f][q];
    total += t.ids.length;
    if (answers[q].length < t.ids.length) short++;
    const seen = new Set();
    for (const id of answers[q]) {
      if (seen.has(id)) continue; // a repeated id counts once
      seen.add(id);
      if (!Number.isInteger(id) || id < 0 || id >= data.rows || !FILTERS[f].pass(data.tags[id])) {
        violations++;
        continue;
      }
      if (l2(data.queries, q * DIM, data.vectors, id * DIM) <= t.kth) hit++;
    }
  }
  return { recall_at_10: total === 0 ? 1 : Math.min(hit, total) / total, filter_violations: violations, short_answers: short };
}

const queryVector = (data, q) => Array.from(data.queries.subarray(q * DIM, (q + 1) * DIM));

function search(table, v, where) {
  let s = table.vectorSearch(v);
  if (where) s = s.where(where);
  return s.limit(K).select(["id"]).toArray();
}

/** Loads `data` into `table` in LOAD_BATCH-row adds; returns seconds. */
async function load(ctx, system, table, sch, data) {
  const { arrow, log } = ctx;
  const t0 = performance.now();
  let lastLog = t0;
  for (let from = 0; from < data.rows; from += LOAD_BATCH) {
    const to = Math.min(data.rows, from + LOAD_BATCH);
    await table.add(batch(arrow, sch, data, from, to));
    const now = performance.now();
    if (now - lastLog > 10000) {
      log(`  filtered ${system}: loaded ${to}/${data.rows} rows, ${((to / (now - t0)) * 1000).toFixed(0)} rows/s`);
      lastLog = now;
    }
  }
  return (performance.now() - t0) / 1000;
}

/** Builds one system's table; returns {table, load_seconds, index_seconds, compact_seconds}. */
async function prepare(ctx, sys, data) {
  const { lancedb, arrow, log } = ctx;
  const strata = sys.system === "strata";
  const sch = schema(arrow, strata);
  const table = await sys.db.createEmptyTable(TABLE, sch);
  const out = { system: sys.system };
  if (strata) {
    const meta = (await table.schema()).fields[0].metadata;
    if (meta?.get("lance-schema:unenforced-primary-key") !== "true") {
      throw new Error(`strata ${TABLE}: id is not reported as primary key (schema metadata ${JSON.stringify([...(meta ?? [])])})`);
    }
    await table.createIndex("vector", { config: strataIndex(lancedb) });
    await table.createIndex("tag", { config: lancedb.Index.btree() });
    out.load_seconds = await load(ctx, sys.system, table, sch, data);
    out.compact_seconds = await strataCompactAll(sys, data.rows, log, TABLE);
    const t0 = performance.now();
    await table.waitForIndex(["vector_idx", "tag_idx"], 3600);
    out.index_seconds = (performance.now() - t0) / 1000;
    const stats = await sys.post(TABLE, "index/vector_idx/stats/");
    out.vector_index_stats = stats.json ?? stats.text;
  } else {
    out.load_seconds = await load(ctx, sys.system, table, sch, data);
    const t0 = performance.now();
    await table.createIndex("vector", { config: lancedb.Index.hnswSq() });
    await table.createIndex("tag", { config: lancedb.Index.btree() });
    await table.waitForIndex(["vector_idx", "tag_idx"], 3600);
    out.index_seconds = (performance.now() - t0) / 1000;
    out.vector_index_stats = await table.indexStats("vector_idx");
  }
  out.table_rows = await table.countRows();
  if (out.table_rows !== data.rows) throw new Error(`${sys.system} ${TABLE}: ${out.table_rows} rows after loading ${data.rows}`);
  log(`  filtered ${sys.system}: ${out.table_rows} rows; load ${out.load_seconds.toFixed(1)} s` +
    `${out.compact_seconds != null ? `, flush/ + compact/ ${out.compact_seconds.toFixed(1)} s` : ""}, index ${out.index_seconds.toFixed(2)} s`);
  return { table, info: out };
}

/** The 3 interleaved passes on one system; returns one entry per filter. */
async function measure(ctx, system, table, data, gt) {
  const { log } = ctx;
  const qv = [];
  for (let q = 0; q < QUERIES; q++) qv.push(queryVector(data, q));
  const per = FILTERS.map(() => ({ qps: [], lat: [], answers: null }));
  const plans = [];
  for (const f of FILTERS) {
    let s = table.vectorSearch(qv[0]);
    if (f.where) s = s.where(f.where);
    plans.push(await s.limit(K).select(["id"]).explainPlan(true));
  }
  for (let pass = 0; pass < PASSES; pass++) {
    for (let f = 0; f < FILTERS.length; f++) {
      const where = FILTERS[f].where;
      for (let q = 0; q < WARMUP; q++) await search(table, qv[q], where);
      const answers = new Array(QUERIES);
      const t0 = performance.now();
      for (let q = 0; q < QUERIES; q++) {
        const s = performance.now();
        answers[q] = await search(table, qv[q], where);
        per[f].lat.push(performance.now() - s);
      }
      per[f].qps.push(QUERIES / ((performance.now() - t0) / 1000));
      if (pass === 0) per[f].answers = answers.map((rows) => rows.map((r) => Number(r.id)));
    }
    log(`  filtered ${system} pass ${pass + 1}: ${FILTERS.map((f, i) => `${f.label} ${per[i].qps[pass].toFixed(0)}`).join(", ")} q/s`);
  }
  const base = median(per[0].qps);
  return FILTERS.map((f, i) => {
    const qps = median(per[i].qps);
    const lat = per[i].lat.slice().sort((a, b) => a - b);
    return {
      system,
      filter: f.label,
      where: f.where,
      passing_rows: gt.passingRows[i],
      selectivity: gt.passingRows[i] / data.rows,
      qps,
      qps_passes: per[i].qps,
      ratio_to_unfiltered: qps / base,
      p50_ms: percentile(lat, 50),
      p99_ms: percentile(lat, 99),
      ...recall(data, gt, i, per[i].answers),
      explain_plan: plans[i],
    };
  });
}

/** Runs the workload; returns the `filtered` object of results.json. */
export async function run(ctx) {
  const { opts, log } = ctx;
  const rows = opts.filteredRows ?? (opts.quick ? QUICK_ROWS : DEFAULT_ROWS);
  let t0 = performance.now();
  const data = generate(rows);
  const gt = groundTruth(data);
  log(`filtered: ${rows} rows, ${QUERIES} queries; data + exact ground truth (${FILTERS.length} filters) in ` +
    `${((performance.now() - t0) / 1000).toFixed(1)} s; passing rows ${gt.passingRows.join(", ")}`);
  const build = [];
  const points = [];
  for (const which of ["strata", "lancedb"]) {
    t0 = performance.now();
    const sys = which === "strata" ? await ctx.openStrata("strata-filtered") : await ctx.openLance("lancedb-filtered");
    try {
      log(`filtered ${which}: loading ${rows} rows in ${LOAD_BATCH}-row adds`);
      const { table, info } = await prepare(ctx, sys, data);
      build.push(info);
      const res = await measure(ctx, which, table, data, gt);
      points.push(...res);
      for (const e of res) {
        log(`  filtered ${which} ${e.filter}: ${e.qps.toFixed(0)} q/s (${e.ratio_to_unfiltered.toFixed(2)}x unfiltered), ` +
          `p50 ${e.p50_ms.toFixed(2)} ms, recall@10 ${e.recall_at_10.toFixed(3)}` +
          `${e.filter_violations ? `, ${e.filter_violations} FILTER VIOLATIONS` : ""}${e.short_answers ? `, ${e.short_answers} short answers` : ""}`);
      }
      info.seconds = (performance.now() - t0) / 1000;
    } finally {
      await sys.close(); // frees the memory before the other system loads
    }
  }
  return {
    params: {
      rows,
      queries: QUERIES,
      warmup: WARMUP,
      passes: PASSES,
      k: K,
      dim: DIM,
      tags: TAGS,
      load_batch: LOAD_BATCH,
      filters: FILTERS.map((f) => f.where ?? "none"),
      strata: "createEmptyTable with primary key id, Index.hnswSq({m: 16, efConstruction: 100}) and Index.btree() on tag " +
        "before loading, then flush/ + compact/ into the base",
      lancedb: "plain table, add, then Index.hnswSq() (defaults) and Index.btree() on tag + waitForIndex",
      query: "vectorSearch(v).where(filter).limit(10).select([\"id\"]) (prefilter, the client's default)",
    },
    build,
    points,
  };
}
