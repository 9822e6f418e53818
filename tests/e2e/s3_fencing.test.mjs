// Fencing on one bucket (issue 17, "Fencing"): two `strata serve --store s3://` processes on the
// same bucket prefix, through the LanceDB client. A bucket cannot be locked, so both start; the
// second one's open of the table claims its shard (a new writer epoch, put-if-absent), and the
// first one's next write is refused with 409 `fenced` while its /readyz turns 503. Every write
// the first server acknowledged before the claim is present exactly once on the second one,
// and nothing of a refused write is. Runs in `make test-s3` (STRATA_E2E_STORE=s3); skipped
// elsewhere (the local-disk case is in http_errors.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { startServer, StrataServer } from "./lib/server.mjs";
import { loadClients } from "../../scripts/lib/datasets.mjs";

const enabled = process.env.STRATA_E2E_STORE === "s3";
const DIM = 4;
const BATCH = 10;

test("two servers on one bucket: the second claims the table, the first is fenced, every acknowledged row survives once", { skip: !enabled && "needs make test-s3 (STRATA_E2E_STORE=s3)", timeout: 120000 }, async (t) => {
  const { lancedb, arrow } = loadClients();
  const a = await startServer({ extraArgs: ["--owner-check-ms", "0"] });
  let b;
  t.after(async () => {
    if (b) await b.stop();
    await a.cleanup();
  });
  const schema = new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
  const rowsOf = (first) => Array.from({ length: BATCH }, (_, i) => ({ id: first + i, vector: Array.from({ length: DIM }, (_, j) => first + i + j) }));
  const dbA = await lancedb.connect("db://fence", { apiKey: "k", hostOverride: a.url });
  const tableA = await dbA.createEmptyTable("rows", schema);

  const acked = [];
  const refused = [];
  let next = 0;
  const writer = (async () => {
    for (;;) {
      const first = next;
      next += BATCH;
      try {
        await tableA.add(rowsOf(first));
        acked.push(first);
      } catch (e) {
        refused.push({ first, message: String(e.message) });
        if (/fenced/.test(String(e.message))) return;
        if (refused.length > 20) throw new Error(`writes fail, not fenced: ${e.message}\n${a.logTail(2000)}`);
      }
      if (acked.length > 2000) throw new Error("the first server was never fenced");
    }
  })();
  const deadline = Date.now() + 30000;
  while (acked.length < 15) {
    if (Date.now() > deadline || refused.length > 20) throw new Error(`15 writes not acknowledged in 30 s: ${JSON.stringify(refused.slice(-3))}\n${a.logTail(2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }

  // The second server on the same bucket prefix (the harness names the prefix after the data
  // directory). It opens the table at start or at its first request: WAL replay and the claim.
  b = new StrataServer({ dataDir: a.dataDir });
  await b.start();
  const dbB = await lancedb.connect("db://fence", { apiKey: "k", hostOverride: b.url });
  const tableB = await dbB.openTable("rows");
  await tableB.countRows();
  await writer;
  const last = refused[refused.length - 1];
  assert.match(last.message, /409 Conflict: \{"error":"fenced"/, `the first server's write after the claim: ${last.message}`);
  const ready = await fetch(`${a.url}/readyz`);
  assert.equal(ready.status, 503, "the fenced server is not ready");
  assert.deepEqual((await ready.json()).reasons.map((x) => x.state), ["fenced"]);

  // On the new owner: each acknowledged batch once, nothing of a refused batch.
  const rows = await tableB.query().select(["id"]).limit(1000000).toArray();
  const ids = rows.map((r) => Number(r.id)).sort((x, y) => x - y);
  assert.equal(new Set(ids).size, ids.length, "no row twice");
  const want = acked.flatMap((f) => Array.from({ length: BATCH }, (_, i) => f + i)).sort((x, y) => x - y);
  assert.deepEqual(ids, want, `every acknowledged row once (${acked.length} batches acknowledged, ${refused.length} refused)`);
  // The new owner takes writes.
  await tableB.add(rowsOf(1000000));
  assert.equal(await tableB.countRows(), want.length + BATCH);
});
