// End-to-end, raw HTTP: `flush/` under write load (issue 6, section Tests; DESIGN.md §4 rules
// 7-8). One client inserts 500-row Arrow batches in a loop while another calls flush/ 10 times.
// Every flush must answer 200 well inside its timeout_ms (its own elapsed_ms and the client's
// wall time are both checked and reported), and right after it mem_wal/describe/ must list the
// generation it waited for among the SSTables, with at least every row acknowledged before the
// flush was sent in SSTables. At the end the table holds exactly the acknowledged rows.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { vectorStream } from "./lib/ipc_bodies.mjs";
import { startServer } from "./lib/server.mjs";

const DB = "fl";
const DIM = 16;
const BATCH = 500;
const FLUSHES = 10;
const TIMEOUT_MS = 10000;

async function post(base, route, body) {
  const headers = { "x-lancedb-database": DB };
  let payload;
  if (body instanceof Uint8Array) {
    headers["content-type"] = "application/vnd.apache.arrow.stream";
    payload = body;
  } else if (body !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${base}/v1/table/load/${route}`, { method: "POST", headers, body: payload });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

describe("flush/ under insert load", () => {
  let server;
  before(async () => {
    server = await startServer();
    const r = await post(server.url, "create/", vectorStream(0, 1, DIM));
    assert.equal(r.status, 200, r.text);
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("10 flushes while a client inserts: each 200 inside its timeout, its generation in the SSTables", async (ctx) => {
    const base = server.url;
    let acked = 1; // the create/ row
    let nextId = 1;
    let stop = false;
    const insertErrors = [];
    let inserts = 0;
    let lastAckedStart = -1; // performance.now() at which the last acknowledged insert was sent

    const inserter = (async () => {
      let seed = 1;
      while (!stop) {
        const body = vectorStream(nextId, BATCH, DIM, seed++);
        nextId += BATCH;
        const sent = performance.now();
        const r = await post(base, "insert/", body);
        if (r.status !== 200) {
          insertErrors.push(`${r.status} ${r.text.slice(0, 200)}`);
          if (insertErrors.length > 5) break;
          continue;
        }
        acked += BATCH;
        inserts++;
        lastAckedStart = sent;
      }
    })();

    const figures = [];
    try {
      let mark = performance.now();
      for (let i = 0; i < FLUSHES; i++) {
        // Wait for an insert sent after the previous flush answered to be acknowledged: its rows
        // are in the active MemTable, so this flush has something to seal.
        while (lastAckedStart <= mark && insertErrors.length === 0) await new Promise((r) => setTimeout(r, 2));
        const ackedBefore = acked;
        const insertsBefore = inserts;
        const t0 = performance.now();
        const r = await post(base, "flush/", { timeout_ms: TIMEOUT_MS });
        const wall = performance.now() - t0;
        assert.equal(r.status, 200, `flush ${i}: ${r.text}\n${server.logTail(1500)}`);
        assert.equal(r.json.shards.length, 1);
        const s = r.json.shards[0];
        assert.equal(typeof r.json.elapsed_ms, "number");
        assert.ok(r.json.elapsed_ms < TIMEOUT_MS, `flush ${i}: elapsed_ms ${r.json.elapsed_ms} >= timeout ${TIMEOUT_MS}`);
        assert.ok(wall < TIMEOUT_MS, `flush ${i}: ${wall} ms on the client`);
        // The active MemTable held rows, so this flush sealed a generation and waited for it.
        assert.equal(typeof s.sealed_generation, "number", `flush ${i}: ${r.text}`);
        assert.equal(s.waited_generation, s.sealed_generation, `flush ${i}: ${r.text}`);
        assert.ok(s.current_generation > s.waited_generation, `flush ${i}: ${r.text}`);

        const d = await post(base, "mem_wal/describe/");
        assert.equal(d.status, 200, d.text);
        const shard = d.json.shards[0];
        const gens = shard.sstables.map((x) => x.generation);
        // The background compactor may already have moved it into the base table.
        const compacted = (d.json.base?.compacted_generation ?? {})[shard.shard_id] ?? 0;
        assert.ok(gens.includes(s.waited_generation) || compacted >= s.waited_generation,
          `flush ${i}: generation ${s.waited_generation} not in sstables ${gens} nor compacted (${compacted})`);
        assert.ok(shard.current_generation > s.waited_generation);
        const inSSTables = shard.sstables.reduce((a, x) => a + x.rows, 0) + (d.json.base?.rows ?? 0);
        assert.ok(inSSTables >= ackedBefore, `flush ${i}: ${inSSTables} rows in SSTables and the base < ${ackedBefore} acknowledged before it`);
        figures.push({
          i,
          generation: s.waited_generation,
          elapsed_ms: r.json.elapsed_ms,
          wall_ms: Math.round(wall),
          inserts_during: inserts - insertsBefore,
          sstable_rows: inSSTables,
        });
        mark = performance.now();
      }
    } finally {
      stop = true;
      await inserter;
    }
    assert.deepEqual(insertErrors, [], "every insert under load succeeded");
    // Generations strictly increase from flush to flush.
    for (let i = 1; i < figures.length; i++) assert.ok(figures[i].generation > figures[i - 1].generation);
    const during = figures.reduce((a, f) => a + f.inserts_during, 0);
    assert.ok(inserts >= FLUSHES, `only ${inserts} inserts ran`);
    const c = await post(base, "count_rows/", {});
    assert.equal(c.json, acked, "the table holds exactly the acknowledged rows");
    const c2 = await post(base, "count_rows/", { predicate: `id >= ${nextId}` });
    assert.equal(c2.json, 0);
    const maxElapsed = Math.max(...figures.map((f) => f.elapsed_ms));
    ctx.diagnostic(
      `flush elapsed_ms ${figures.map((f) => f.elapsed_ms).join(", ")} (max ${maxElapsed}, timeout ${TIMEOUT_MS}); ` +
        `client wall ms ${figures.map((f) => f.wall_ms).join(", ")}; ${inserts} inserts of ${BATCH} rows, ` +
        `${during} completed while a flush was in flight; generations ${figures.map((f) => f.generation).join(", ")}`,
    );
  });
});
