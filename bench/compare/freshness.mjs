// Workload 2 of `make bench-compare`: freshness — the time from a write's acknowledgement to the
// row being returned by a vector search on a SECOND connection.
//
// On each system's indexed full table (fm_b1000 from ingest.mjs): `writes` times, connection A
// adds one row (Fashion-MNIST test image i as its vector, a fresh id 1,000,000 + i); once the
// add resolves, connection B (system.connect(): Strata a second remote connection, LanceDB
// readConsistencyInterval 0) searches for that exact vector (k = 5, ids only) in a tight loop
// until the new id is among the answers. Records ack -> visible ms and the number of searches.
// A write not visible within 30 s counts as a failure (`not_visible`) and the run goes on.
import { fashionSchema, fashionBatch, fashionVector } from "../../scripts/lib/datasets.mjs";
import { ensureIndexed } from "./ingest.mjs";

const ID_BASE = 1_000_000;
const TIMEOUT_MS = 30000;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function one(ctx, sys, tableName, writes) {
  const { arrow, fashion } = ctx;
  const schema = fashionSchema(arrow);
  const a = await sys.db.openTable(tableName);
  const connB = await sys.connect();
  const b = await connB.openTable(tableName);
  const lat = [];
  let polls = 0;
  let notVisible = 0;
  const n = Math.min(writes, fashion.test.n);
  for (let i = 0; i < n; i++) {
    const id = ID_BASE + i;
    const vec = fashionVector(fashion.test, i);
    await a.add(fashionBatch(arrow, schema, fashion.test, i, i + 1, ID_BASE));
    const acked = performance.now();
    for (;;) {
      polls++;
      const rows = await b.vectorSearch(vec).limit(5).select(["id"]).toArray();
      if (rows.some((r) => Number(r.id) === id)) {
        lat.push(performance.now() - acked);
        break;
      }
      if (performance.now() - acked > TIMEOUT_MS) {
        notVisible++;
        break;
      }
    }
    if ((i + 1) % 200 === 0) ctx.log(`  ${sys.system}: ${i + 1}/${n} writes`);
  }
  const sorted = lat.slice().sort((x, y) => x - y);
  return {
    system: sys.system,
    writes: n,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted[sorted.length - 1],
    mean_ms: sorted.reduce((x, y) => x + y, 0) / sorted.length,
    polls_mean: polls / n,
    not_visible: notVisible,
  };
}

/** Runs the freshness workload; returns the `freshness` array of results.json. */
export async function run(ctx) {
  const tables = await ensureIndexed(ctx);
  const writes = ctx.opts.freshnessWrites ?? (ctx.opts.quick ? 50 : 1000);
  const out = [];
  for (const [sys, name] of [[ctx.state.strata, tables.strata.hnsw], [ctx.state.lance, tables.lancedb.hnsw]]) {
    ctx.log(`freshness ${sys.system}: ${writes} single-row writes, search on a second connection`);
    const r = await one(ctx, sys, name, writes);
    ctx.log(`  ${sys.system}: p50 ${r.p50_ms.toFixed(2)} ms, p99 ${r.p99_ms.toFixed(2)} ms, ` +
      `max ${r.max_ms.toFixed(2)} ms, ${r.polls_mean.toFixed(2)} searches per write`);
    out.push(r);
  }
  return out;
}
