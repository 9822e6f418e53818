// Workload 5 of `make bench-compare`: flush / compaction latency under sustained writes.
//
// On each system's indexed full table (fm_b1000 from ingest.mjs), one writer adds 1,000-row
// batches of Fashion-MNIST training rows (fresh ids from 2,000,000) at the same target rate for
// both systems (opts.flushRate rows/s, default 2,000; a batch is sent as soon as the previous one
// is acknowledged and its scheduled time has come, so a slower system falls behind the target and
// its achieved rows/s shows it), while
// the main loop calls, `calls` times (10; --quick 3), one after the other with 200 ms between:
// - Strata: `POST /v1/table/{name}/flush/` (PROTOCOL.md: returns once every row acknowledged
//   before the request is in an SSTable); latency = the client's wall time.
// - LanceDB OSS: `table.optimize()` (compaction, index update with the new rows, cleanup of old
//   versions: LanceDB docs' maintenance advice after many appends).
// The calls stop early once the phase has run opts.flushBudgetSeconds (default 300 s; at least
// one call is made): in a 60,000-row trial on a loaded 2-core machine LanceDB's first optimize()
// took 198 s (1,000 single-row fragments from the freshness workload plus the writer's rows).
// `calls` is the number made, `calls_requested` the number asked for.
// Reports each call's latency (p50/p99/max), and the writer's rows/s and errors over the phase.
// Why a target rate and not a closed loop: LanceDB's local `add` of 1,000 rows takes ~20 ms, so
// an unpaced writer appends ~50,000 rows/s (150 MB/s), and each optimize() then has to compact
// everything written during the previous one — in a trial the second call had not finished
// after 13 minutes with 24 GB written. A fixed rate makes the two systems' loads equal.
import { fashionSchema, fashionBatch } from "../../scripts/lib/datasets.mjs";
import { ensureIndexed } from "./ingest.mjs";

const ID_BASE = 2_000_000;
const BATCH = 1000;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function one(ctx, sys, tableName, calls) {
  const { arrow, fashion } = ctx;
  const schema = fashionSchema(arrow);
  const train = fashion.train;
  const writerConn = await sys.connect();
  const wt = await writerConn.openTable(tableName);
  const table = await sys.db.openTable(tableName);
  const batches = Math.floor(Math.min(ctx.opts.train, train.n) / BATCH);
  let stop = false;
  let rows = 0;
  let errors = 0;
  let firstError = null;
  let next = 0;
  const rate = ctx.opts.flushRate ?? 2000;
  const wStart = performance.now();
  const writer = (async () => {
    while (!stop) {
      const due = wStart + ((next * BATCH) / rate) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (stop) break;
      const b = next % batches;
      const idBase = ID_BASE + Math.floor(next / batches) * batches * BATCH;
      next++;
      try {
        await wt.add(fashionBatch(arrow, schema, train, b * BATCH, (b + 1) * BATCH, idBase));
        rows += BATCH;
      } catch (e) {
        errors++;
        firstError ??= e.message;
      }
    }
  })();
  await new Promise((r) => setTimeout(r, 500)); // let the writer reach its steady state
  const t0 = performance.now();
  const budgetMs = (ctx.opts.flushBudgetSeconds ?? 300) * 1000;
  const rows0 = rows;
  const lat = [];
  const details = [];
  try {
    for (let i = 0; i < calls; i++) {
      if (i > 0 && performance.now() - t0 > budgetMs) {
        ctx.log(`  ${sys.system}: stopping after ${i} calls (time budget ${budgetMs / 1000} s spent)`);
        break;
      }
      const c0 = performance.now();
      if (sys.system === "strata") {
        const r = await sys.flush(tableName);
        details.push({ server_elapsed_ms: r.elapsed_ms });
      } else {
        const r = await table.optimize();
        details.push({ compaction: r.compaction, prune: r.prune });
      }
      const ms = performance.now() - c0;
      lat.push(ms);
      ctx.log(`  ${sys.system} ${sys.system === "strata" ? "flush" : "optimize"} ${i + 1}/${calls}: ${ms.toFixed(1)} ms ` +
        `(writer ${rows - rows0} rows so far)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    stop = true;
    await writer;
  }
  const seconds = (performance.now() - t0) / 1000;
  const sorted = lat.slice().sort((a, b) => a - b);
  if (firstError) ctx.log(`  ${sys.system} writer error (first of ${errors}): ${firstError}`);
  return {
    system: sys.system,
    op: sys.system === "strata" ? "flush" : "optimize",
    calls: lat.length,
    calls_requested: calls,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted[sorted.length - 1],
    latencies_ms: lat,
    writer_target_rows_per_s: rate,
    writer_rows_per_s: (rows - rows0) / seconds,
    writer_errors: errors,
    writer_first_error: firstError,
  };
}

/** Runs the flush workload; returns the `flush` array of results.json. */
export async function run(ctx) {
  const tables = await ensureIndexed(ctx);
  const calls = ctx.opts.flushCalls ?? (ctx.opts.quick ? 3 : 10);
  const out = [];
  for (const [sys, name] of [[ctx.state.strata, tables.strata.hnsw], [ctx.state.lance, tables.lancedb.hnsw]]) {
    ctx.log(`flush ${sys.system}: ${calls} calls under a 1,000-row-batch writer`);
    const r = await one(ctx, sys, name, calls);
    ctx.log(`  ${sys.system}: p50 ${r.p50_ms.toFixed(1)} ms, max ${r.max_ms.toFixed(1)} ms, ` +
      `writer ${r.writer_rows_per_s.toFixed(0)} rows/s, ${r.writer_errors} errors`);
    out.push(r);
  }
  return out;
}
