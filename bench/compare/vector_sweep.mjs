// Workload 3 of `make bench-compare`: vector search recall@10 and queries/s over a parameter sweep
// (the recall-QPS curve), with 1 and 8 concurrent clients, on the indexed full tables that
// ingest.mjs leaves open, plus the in-process hnswlib reference (`<buildDir>/hnswlib_sweep`).
//
// Every query: the Fashion-MNIST test image q (q < opts.queries) through the LanceDB client,
// `table.vectorSearch(v).limit(10).select(["id"])` (only the ids travel back) plus the point's
// parameters, l2 distance. recall@10 against the exact ground truth ctx.gt with ties at the
// 10th distance counted as hits (recallAtK, ann-benchmarks' rule). "N clients" = N requests in
// flight from this one Node process (N async loops sharing one query counter over one
// connection); queries/s = queries / wall time; p50/p99 of the per-request latency.
// Each table gets an unmeasured warm-up of min(100, queries) queries first.
//
// Points: Strata ef in {10,...,320} and its default (no ef: max(k, 64)); LanceDB IVF_HNSW_SQ
// the same ef values at its default nprobes (20), plus larger nprobes if the ef sweep stays
// under recall 0.95; LanceDB IVF_PQ nprobes {5,10,20,50} x refine_factor {none,5,10}.
// --quick trims every list.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fashionVector, recallAtK } from "../../scripts/lib/datasets.mjs";
import { ensureIndexed } from "./ingest.mjs";

const K = 10;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function applyParams(q, params) {
  if (params.ef != null) q = q.ef(params.ef);
  if (params.nprobes != null) q = q.nprobes(params.nprobes);
  if (params.refine_factor != null) q = q.refineFactor(params.refine_factor);
  return q;
}

export function labelOf(params) {
  const parts = [];
  if (params.nprobes != null) parts.push(`nprobes=${params.nprobes}`);
  if (params.ef != null) parts.push(`ef=${params.ef}`);
  if (params.refine_factor != null) parts.push(`rf=${params.refine_factor}`);
  return parts.length ? parts.join(" ") : "default";
}

/**
 * The IVF_PQ query points: nprobes {5,10,20,50} x refine_factor {none,5,10} ({10,50} x
 * {none,10} with --quick). The vector workload (LanceDB IVF_PQ) and the ivfpq workload (both
 * systems) use this one list.
 */
export function ivfPqPoints(opts) {
  const nprobes = opts.quick ? [10, 50] : [5, 10, 20, 50];
  const rfs = opts.quick ? [null, 10] : [null, 5, 10];
  const points = [];
  for (const np of nprobes) for (const rf of rfs) points.push(rf == null ? { nprobes: np } : { nprobes: np, refine_factor: rf });
  return points;
}

/**
 * Runs queries [0, n) against `table` with `clients` requests in flight.
 * Returns {recall_at_10, qps, p50_ms, p99_ms}.
 */
export async function measure(table, vectors, params, clients, ctx, n = vectors.length) {
  const lat = new Array(n);
  const recall = new Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const q = next++;
      if (q >= n) return;
      const t0 = performance.now();
      const rows = await applyParams(table.vectorSearch(vectors[q]).limit(K).select(["id"]), params).toArray();
      lat[q] = performance.now() - t0;
      if (ctx.gt) {
        const ids = rows.map((r) => Number(r.id));
        recall[q] = recallAtK(ids, ctx.gt.ids[q], ctx.gt.dist[q], K, ctx.fashion, q);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, worker));
  const wall = (performance.now() - t0) / 1000;
  const sorted = lat.slice().sort((a, b) => a - b);
  return {
    recall_at_10: ctx.gt ? recall.reduce((a, b) => a + b, 0) / n : NaN,
    qps: n / wall,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
  };
}

export async function sweep(ctx, system, index, table, vectors, points, out) {
  await measure(table, vectors, points[0], 1, ctx, Math.min(100, vectors.length)); // warm-up
  for (const params of points) {
    for (const clients of ctx.opts.clients) {
      const m = await measure(table, vectors, params, clients, ctx);
      const e = { system, index, params, label: labelOf(params), clients, queries: vectors.length, ...m };
      out.push(e);
      ctx.log(`  ${system} ${index} ${e.label} c=${clients}: recall@10 ${m.recall_at_10.toFixed(4)}, ` +
        `${m.qps.toFixed(0)} q/s, p50 ${m.p50_ms.toFixed(2)} ms, p99 ${m.p99_ms.toFixed(2)} ms`);
    }
  }
}

/** Runs `<buildDir>/hnswlib_sweep`; returns its JSON, or null (with a warning) when it is absent. */
export function runHnswlib(ctx, efs) {
  const tool = path.join(ctx.opts.buildDir, "hnswlib_sweep");
  if (!fs.existsSync(tool)) {
    ctx.log(`WARNING: ${tool} not found; skipping the hnswlib reference run`);
    return null;
  }
  if (!ctx.gtFile) {
    ctx.log("WARNING: no ground-truth file; skipping the hnswlib reference run");
    return null;
  }
  const out = path.join(ctx.opts.workDir, "hnswlib_sweep.json");
  const args = ["--train", String(ctx.opts.train), "--queries", String(ctx.opts.queries), "--gt", ctx.gtFile,
    "--m", "16", "--ef-construction", "100", "--ef", efs.join(","), "--clients", ctx.opts.clients.join(","),
    "--out", out];
  ctx.log(`hnswlib: ${tool} ${args.join(" ")}`);
  execFileSync(tool, args, { stdio: ["ignore", "inherit", "inherit"] });
  return JSON.parse(fs.readFileSync(out, "utf8"));
}

/** Runs the sweep; returns {vector: [...], hnswlib: build info or null}. */
export async function run(ctx) {
  const { opts, fashion, log } = ctx;
  const tables = await ensureIndexed(ctx);
  const vectors = [];
  for (let q = 0; q < opts.queries; q++) vectors.push(fashionVector(fashion.test, q));
  const efs = opts.quick ? [10, 40, 160] : [10, 20, 40, 80, 160, 320];
  const out = [];

  log(`vector sweep strata (${opts.queries} queries per point, clients ${opts.clients.join(",")})`);
  const st = await ctx.state.strata.db.openTable(tables.strata.hnsw);
  await sweep(ctx, "strata", "HNSW (maintained)", st, vectors, [{}, ...efs.map((ef) => ({ ef }))], out);

  log("vector sweep lancedb IVF_HNSW_SQ");
  const lt = await ctx.state.lance.db.openTable(tables.lancedb.hnsw);
  await sweep(ctx, "lancedb", "IVF_HNSW_SQ", lt, vectors, [{}, ...efs.map((ef) => ({ ef }))], out);
  const best = Math.max(...out.filter((e) => e.system === "lancedb").map((e) => e.recall_at_10));
  if (best < 0.95) {
    log(`  IVF_HNSW_SQ best recall ${best.toFixed(4)} < 0.95 at the default nprobes; adding nprobes points`);
    const extra = opts.quick ? [{ nprobes: 100, ef: 160 }] : [{ nprobes: 50, ef: 160 }, { nprobes: 100, ef: 320 }];
    await sweep(ctx, "lancedb", "IVF_HNSW_SQ", lt, vectors, extra, out);
  }

  log("vector sweep lancedb IVF_PQ");
  const pt = await ctx.state.lance.db.openTable(tables.lancedb.pq);
  await sweep(ctx, "lancedb", "IVF_PQ", pt, vectors, ivfPqPoints(opts), out);

  let hnswlib = null;
  try {
    hnswlib = runHnswlib(ctx, efs);
  } catch (e) {
    log(`WARNING: hnswlib_sweep failed: ${e.message}`);
  }
  if (hnswlib) {
    for (const p of hnswlib.points) {
      out.push({
        system: "hnswlib",
        index: `HNSW (in-process, m=${hnswlib.m}, ef_construction=${hnswlib.ef_construction})`,
        params: { ef: p.ef },
        label: `ef=${p.ef}`,
        clients: p.clients,
        queries: hnswlib.queries,
        recall_at_10: p.recall_at_10,
        qps: p.qps,
        p50_ms: p.p50_ms,
        p99_ms: p.p99_ms,
      });
    }
    const { points, ...build } = hnswlib;
    hnswlib = build;
  }
  return { vector: out, hnswlib };
}
