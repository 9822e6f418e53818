// Workload `ivfpq` of `make bench-compare` (issue 15): Strata's IVF_PQ against LanceDB's IVF_PQ
// with the same parameters on the Fashion-MNIST training rows: build time, index size,
// recall@10 and queries/s at the IVF_PQ query points of the vector workload (ivfPqPoints:
// nprobes {5,10,20,50} x refine_factor {none,5,10}), 1 and 8 clients, through the LanceDB client
// (remote mode against `strata serve`, local for LanceDB OSS).
//
// Each system gets its own table `fm_ivfpq`, loaded with 1,000-row adds (not timed as build).
// - LanceDB: createIndex(Index.ivfPq()) with the client's defaults (the index of the vector
//   workload), then waitForIndex. Its parameters are then read back, not assumed:
//   num_sub_vectors, num_bits, max_iters and sample_rate from listIndices() (indexDetails), and
//   num_partitions from analyzePlan() of one query at nprobes 1,000,000 (`partitions_ranked`
//   of ANNIvfPartition: every partition is ranked).
// - Strata: the IVF types are built on the base table only (docs/INDEXES.md), so the rows are
//   first flushed (flush/) and compacted (compact/, repeated until no SSTable is left and the
//   base holds every row; timed separately as compact_seconds). Then
//   createIndex(Index.ivfPq({numPartitions, numSubVectors, numBits, maxIterations, sampleRate}))
//   with LanceDB's values; the table's index builder trains it in the background.
// Build time, both systems: the createIndex call -> the index covers every row (LanceDB:
// waitForIndex returns, i.e. numUnindexedRows = 0; Strata: `index/{n}/stats/` reports
// `base_index` of type IVF_PQ with `rows` = the table's rows and num_unindexed_rows 0, polled
// every 100 ms). Index size: LanceDB's listIndices() sizeBytes (the index files), Strata's
// base_index.memory_bytes (the FAISS index in memory) and index/list/ size_bytes.
// Strata's stats are compared with what was sent (params_honoured) and one explain_plan/ per
// system is kept, so the results show which index and nprobes / refine_factor served the queries.
import { fashionSchema, fashionVector } from "../../scripts/lib/datasets.mjs";
import { writeRows } from "./ingest.mjs";
import { ivfPqPoints, sweep } from "./vector_sweep.mjs";

const TABLE = "fm_ivfpq";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** LanceDB's IVF_PQ parameters as its index reports them (see the header). */
async function lanceParams(table, vector) {
  const idx = (await table.listIndices()).find((i) => i.name === "vector_idx");
  if (!idx) throw new Error("lancedb: vector_idx not in listIndices()");
  const d = idx.indexDetails ?? {};
  const hints = d.runtime_hints ?? {};
  const plan = await table.vectorSearch(vector).limit(10).nprobes(1000000).analyzePlan();
  const ranked = /partitions_ranked=(\d+)/.exec(plan);
  if (!ranked) throw new Error(`lancedb: no partitions_ranked in analyzePlan():\n${plan}`);
  const p = {
    num_partitions: Number(ranked[1]),
    num_sub_vectors: d.compression?.num_sub_vectors,
    num_bits: d.compression?.num_bits,
    max_iterations: hints["lance.ivf.max_iters"] != null ? Number(hints["lance.ivf.max_iters"]) : undefined,
    sample_rate: hints["lance.ivf.sample_rate"] != null ? Number(hints["lance.ivf.sample_rate"]) : undefined,
    metric: d.metric_type,
  };
  for (const k of ["num_partitions", "num_sub_vectors", "num_bits"]) {
    if (!Number.isInteger(p[k]) || p[k] <= 0) throw new Error(`lancedb: cannot read ${k} of its IVF_PQ index: ${JSON.stringify(d)}`);
  }
  return { params: p, size_bytes: idx.sizeBytes, index_details: d };
}

async function strataPost(strata, route, body = {}, table = TABLE) {
  const r = await strata.post(table, route, body);
  if (r.status !== 200) throw new Error(`strata ${route}: HTTP ${r.status}: ${r.text}`);
  return r.json;
}

/** flush/, then compact/ until no SSTable waits and the base holds `rows`; returns seconds. */
export async function strataCompactAll(strata, rows, log, table = TABLE) {
  const t0 = performance.now();
  await strataPost(strata, "flush/", { timeout_ms: 600000 }, table);
  for (;;) {
    const r = await strata.post(table, "compact/", { timeout_ms: 600000 });
    if (r.status === 409) {
      await sleep(100); // the background compactor is running one
      continue;
    }
    if (r.status !== 200) throw new Error(`strata compact/: HTTP ${r.status}: ${r.text}`);
    const d = await strataPost(strata, "mem_wal/describe/", {}, table);
    const baseRows = d.base?.rows ?? 0;
    if (r.json.sstables_remaining === 0 && baseRows >= rows) break;
    log(`  strata compact/: base ${baseRows}/${rows} rows, ${r.json.sstables_remaining} SSTables remaining`);
    if ((performance.now() - t0) / 1000 > 3600) throw new Error(`strata: base holds ${baseRows}/${rows} rows after an hour of compact/`);
  }
  return (performance.now() - t0) / 1000;
}

/** Polls index/vector_idx/stats/ until the base IVF_PQ covers `rows`; returns the last stats. */
export async function strataWaitBaseIndex(strata, rows, log, table = TABLE) {
  const t0 = performance.now();
  let lastLog = t0;
  for (;;) {
    const s = await strataPost(strata, "index/vector_idx/stats/", {}, table);
    const b = s.base_index;
    if (b && b.index_type === "IVF_PQ" && b.rows >= rows && s.num_unindexed_rows === 0) return s;
    const now = performance.now();
    if (now - lastLog > 10000) {
      log(`  strata IVF_PQ build: ${((now - t0) / 1000).toFixed(0)} s, stats ${JSON.stringify(s)}`);
      lastLog = now;
    }
    if ((now - t0) / 1000 > 3600) throw new Error(`strata: IVF_PQ not built after an hour: ${JSON.stringify(s)}`);
    await sleep(100);
  }
}

/** Runs the workload; returns the `ivfpq` object of results.json. */
export async function run(ctx) {
  const { lancedb, arrow, fashion, opts, log } = ctx;
  const rows = Math.min(opts.train, fashion.train.n);
  const schema = fashionSchema(arrow);
  ctx.state.strata ??= await ctx.openStrata("strata");
  ctx.state.lance ??= await ctx.openLance("lancedb");
  const strata = ctx.state.strata;
  const lance = ctx.state.lance;
  const vectors = [];
  for (let q = 0; q < opts.queries; q++) vectors.push(fashionVector(fashion.test, q));
  const build = [];

  // LanceDB: add, then the index with the client's defaults.
  log(`ivfpq lancedb: ${rows} rows, createIndex(Index.ivfPq()) + waitForIndex`);
  const lt = await lance.db.createEmptyTable(TABLE, schema);
  const lw = await writeRows(lt, arrow, schema, fashion.train, rows, 1000, log, "lancedb ivfpq");
  let t0 = performance.now();
  await lt.createIndex("vector", { config: lancedb.Index.ivfPq(), replace: true });
  await lt.waitForIndex(["vector_idx"], 3600);
  const lBuild = (performance.now() - t0) / 1000;
  const lStats = await lt.indexStats("vector_idx");
  const lp = await lanceParams(lt, vectors[0]);
  const p = lp.params;
  build.push({ system: "lancedb", index: "IVF_PQ", rows, write_seconds: lw, build_seconds: lBuild,
    indexed_rows: lStats?.numIndexedRows, index_bytes: lp.size_bytes, index_bytes_kind: "listIndices sizeBytes (index files)",
    num_partitions: p.num_partitions, num_sub_vectors: p.num_sub_vectors, num_bits: p.num_bits });
  log(`  lancedb IVF_PQ: built in ${lBuild.toFixed(2)} s, ${lp.size_bytes} bytes; num_partitions ${p.num_partitions}, ` +
    `num_sub_vectors ${p.num_sub_vectors}, num_bits ${p.num_bits}, max_iters ${p.max_iterations}, sample_rate ${p.sample_rate}`);

  // Strata: add, compact into the base, then the index with LanceDB's parameters.
  log(`ivfpq strata: ${rows} rows, flush/ + compact/ into the base, then createIndex(IVF_PQ, LanceDB's parameters)`);
  const st = await strata.db.createEmptyTable(TABLE, schema);
  const sw = await writeRows(st, arrow, schema, fashion.train, rows, 1000, log, "strata ivfpq");
  const compactS = await strataCompactAll(strata, rows, log);
  const sent = { numPartitions: p.num_partitions, numSubVectors: p.num_sub_vectors, numBits: p.num_bits, distanceType: "l2" };
  if (p.max_iterations) sent.maxIterations = p.max_iterations;
  if (p.sample_rate) sent.sampleRate = p.sample_rate;
  t0 = performance.now();
  await st.createIndex("vector", { config: lancedb.Index.ivfPq(sent), replace: true });
  const sStats = await strataWaitBaseIndex(strata, rows, log);
  const sBuild = (performance.now() - t0) / 1000;
  const list = await strataPost(strata, "index/list/");
  const listed = (list.indexes ?? []).find((i) => i.index_name === "vector_idx");
  const b = sStats.base_index;
  const honoured = { num_partitions: b.num_partitions === p.num_partitions, num_sub_vectors: b.num_sub_vectors === p.num_sub_vectors,
    num_bits: b.num_bits === p.num_bits };
  build.push({ system: "strata", index: "IVF_PQ", rows, write_seconds: sw, compact_seconds: compactS, build_seconds: sBuild,
    indexed_rows: b.rows, trained_rows: b.trained_rows, index_bytes: b.memory_bytes,
    index_bytes_kind: "index/{n}/stats/ base_index.memory_bytes (in memory)", list_size_bytes: listed?.size_bytes,
    num_partitions: b.num_partitions, num_sub_vectors: b.num_sub_vectors, num_bits: b.num_bits, params_honoured: honoured });
  log(`  strata IVF_PQ: compaction ${compactS.toFixed(2)} s, built in ${sBuild.toFixed(2)} s, ${b.memory_bytes} bytes; ` +
    `stats ${JSON.stringify(b)}`);
  for (const [k, ok] of Object.entries(honoured)) {
    if (!ok) log(`  WARNING: strata's base IVF_PQ has ${k} ${b[k]}, sent ${p[k]}`);
  }

  // Which index and parameters serve a query (kept in the results, not parsed for the figures).
  const planParams = { nprobes: 10, refine_factor: 5 };
  const plans = {};
  for (const [system, table] of [["strata", st], ["lancedb", lt]]) {
    try {
      plans[system] = await table.vectorSearch(vectors[0]).limit(10).nprobes(planParams.nprobes)
        .refineFactor(planParams.refine_factor).select(["id"]).explainPlan(true);
    } catch (e) {
      plans[system] = `explainPlan failed: ${e.message}`;
    }
  }

  const points = ivfPqPoints(opts);
  const out = [];
  log(`ivfpq sweep (${opts.queries} queries per point, clients ${opts.clients.join(",")})`);
  await sweep(ctx, "strata", "IVF_PQ", st, vectors, points, out);
  await sweep(ctx, "lancedb", "IVF_PQ", lt, vectors, points, out);

  // Free the memory and disk for the later workloads.
  await strata.db.dropTable(TABLE);
  await lance.db.dropTable(TABLE);
  return {
    params: { rows, queries: opts.queries, k: 10, lancedb_index: "Index.ivfPq() (client defaults)",
      strata_index: `Index.ivfPq(${JSON.stringify(sent)}) (LanceDB's values, read back from its index)`,
      lancedb_read_back: p, plan_params: planParams },
    build,
    plans,
    points: out,
  };
}
