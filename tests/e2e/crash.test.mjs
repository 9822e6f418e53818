// Crash test: rows acknowledged by `add` survive `kill -9` of strata serve.
//
// Several concurrent writers add small batches through the real LanceDB client; once enough
// adds are acknowledged the server gets SIGKILL while adds are still in flight. After a restart
// on the same data directory every acknowledged row must be present with its exact values, no
// row may appear twice, each unacknowledged batch is either entirely present or entirely absent
// (one insert is one WAL entry), and the table takes new writes. A second kill/restart cycle
// checks that writes made after a recovery are durable as well.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { startServer } from "./lib/server.mjs";
import { bruteForceTopK, randomVector, rng } from "./lib/vectors.mjs";

const DIM = 16;
const BATCH = 25;
const WRITERS = 4;
const KILL_AFTER_ACKS = 60;

const SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("batch", new arrow.Int32(), false),
  new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true),
]);

const rand = rng(777);
let nextBatch = 0;
/** Batch number b holds ids [b*BATCH, (b+1)*BATCH). */
function makeBatch() {
  const b = nextBatch++;
  const rows = [];
  for (let i = 0; i < BATCH; i++) rows.push({ id: b * BATCH + i, batch: b, vector: randomVector(rand, DIM) });
  return { b, rows };
}

const connect = (server) =>
  lancedb.connect("db://crash", {
    apiKey: "x",
    hostOverride: server.url,
    // Fail fast once the server is gone: one attempt, short connect timeout.
    clientConfig: { retryConfig: { retries: 1, connectRetries: 1, readRetries: 1 }, timeoutConfig: { connectTimeout: 2 } },
  });

async function readAll(table) {
  const rows = await table.query().toArray();
  return rows.map((r) => ({
    id: Number(r.id),
    batch: r.batch,
    vector: Array.from(r.vector.toArray()),
  }));
}

/**
 * Runs WRITERS concurrent add loops; kills the server (SIGKILL) once `killAfter` adds are
 * acknowledged. Returns {acked: Map(b -> rows), unacked: Map(b -> rows)}.
 */
async function addUntilKilled(server, table, killAfter) {
  const acked = new Map();
  const unacked = new Map();
  let killed = false;
  let killPromise = null;
  const writer = async () => {
    while (!killed) {
      const { b, rows } = makeBatch();
      unacked.set(b, rows);
      try {
        await table.add(rows);
        if (killed) continue; // answered after SIGKILL was sent: treat as unknown
        unacked.delete(b);
        acked.set(b, rows);
        if (acked.size >= killAfter && !killed) {
          killed = true;
          killPromise = server.kill9();
        }
      } catch {
        if (!killed) throw new Error(`add of batch ${b} failed before the kill\n${server.logTail()}`);
        return;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: WRITERS }, writer));
  for (const r of results) if (r.status === "rejected") throw r.reason;
  await killPromise;
  return { acked, unacked };
}

function checkRecovered(rows, expected, unacked, label) {
  const ids = new Set();
  for (const r of rows) {
    assert.ok(!ids.has(r.id), `${label}: id ${r.id} appears twice`);
    ids.add(r.id);
  }
  let missing = 0;
  for (const [b, batch] of expected) {
    for (const want of batch) {
      if (!ids.has(want.id)) missing++;
    }
    assert.equal(missing, 0, `${label}: acknowledged batch ${b} lost rows`);
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const batch of expected.values()) {
    for (const want of batch) assert.deepEqual(byId.get(want.id), want, `${label}: row ${want.id} differs`);
  }
  // Unacknowledged batches: all or nothing, with exact values when present.
  let partial = 0;
  for (const [b, batch] of unacked) {
    const present = batch.filter((w) => ids.has(w.id)).length;
    if (present !== 0 && present !== batch.length) partial++;
    if (present === batch.length) {
      for (const want of batch) assert.deepEqual(byId.get(want.id), want);
      expected.set(b, batch); // now durable: it must survive the next crash too
    }
    assert.equal(partial, 0, `${label}: unacknowledged batch ${b} is partially present (${present}/${batch.length})`);
  }
  // Nothing that was never sent.
  for (const r of rows) assert.ok(expected.has(r.batch), `${label}: unexpected row ${r.id} of batch ${r.batch}`);
}

describe("crash recovery (kill -9) with the LanceDB client", () => {
  let server;
  after(async () => {
    if (server) await server.cleanup();
  });

  test("every acknowledged add survives kill -9, twice", async () => {
    server = await startServer();
    let db = await connect(server);
    let table = await db.createEmptyTable("crash", SCHEMA);
    const durable = new Map(); // batch -> rows that must be present from now on

    for (const round of [1, 2]) {
      const t0 = Date.now();
      const { acked, unacked } = await addUntilKilled(server, table, KILL_AFTER_ACKS);
      for (const [b, rows] of acked) durable.set(b, rows);
      const inFlight = unacked.size;
      assert.ok(acked.size >= KILL_AFTER_ACKS);
      await server.start(); // same data directory, new port
      db = await connect(server);
      table = await db.openTable("crash");
      const rows = await readAll(table);
      checkRecovered(rows, durable, unacked, `round ${round}`);
      assert.equal(await table.countRows(), rows.length);
      const durableRows = [...durable.values()].reduce((n, r) => n + r.length, 0);
      assert.equal(rows.length, durableRows);
      console.log(
        `round ${round}: ${acked.size} adds acknowledged before kill -9, ${inFlight} in flight, ` +
          `${rows.length} rows after restart (${Date.now() - t0} ms)`,
      );
    }

    // The recovered table takes writes, counts them, and searches over old and new rows.
    const { b, rows: extra } = makeBatch();
    await table.add(extra);
    durable.set(b, extra);
    const total = [...durable.values()].reduce((n, r) => n + r.length, 0);
    assert.equal(await table.countRows(), total);
    assert.equal(await table.countRows(`batch = ${b}`), BATCH);
    const all = [...durable.values()].flat();
    const q = extra[3].vector;
    const res = await table.search(q).limit(5).select(["id"]).toArray();
    assert.deepEqual(
      res.map((r) => Number(r.id)),
      bruteForceTopK("l2", all, q, 5).map((e) => e.id),
    );
    assert.equal(Number(res[0].id), extra[3].id);

    // And a clean restart keeps all of it.
    await server.restart();
    db = await connect(server);
    table = await db.openTable("crash");
    checkRecovered(await readAll(table), durable, new Map(), "clean restart");
  });
});
