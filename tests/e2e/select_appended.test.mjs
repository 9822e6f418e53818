// End-to-end: the LanceDB client's select() may name the column a query appends, as LanceDB OSS
// allows: `_distance` for a vector search, `_score` for a full-text search (the 0.31 client
// logs a deprecation warning on every FTS query that leaves `_score` out). The answer holds the
// selected table columns and the appended column exactly once, with the same values as without
// it in the projection. A projection of only the appended column is refused with a 400 naming it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./lib/server.mjs";

describe("select() naming the appended column", () => {
  let server;
  let table;
  before(async () => {
    server = await startServer();
    const db = await lancedb.connect("db://sel", { apiKey: "k", hostOverride: server.url });
    const rows = [];
    for (let i = 0; i < 50; i++) {
      rows.push({ id: i, text: i % 2 ? `red apple number ${i}` : `green pear ${i}`, vector: [i, i % 7, 1] });
    }
    table = await db.createTable("t", rows);
    await table.createIndex("text", { config: lancedb.Index.fts() });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("vector search: select(['id', '_distance'])", async () => {
    const plain = await table.vectorSearch([10, 3, 1]).limit(5).select(["id"]).toArray();
    const withDist = await table.vectorSearch([10, 3, 1]).limit(5).select(["id", "_distance"]).toArray();
    assert.equal(withDist.length, 5);
    assert.deepEqual(Object.keys(withDist[0]).sort(), ["_distance", "id"]);
    assert.deepEqual(withDist.map((r) => r.id), plain.map((r) => r.id));
    assert.deepEqual(withDist.map((r) => r._distance), plain.map((r) => r._distance));
    assert.equal(withDist[0].id, 10);
    assert.equal(withDist[0]._distance, 0);
  });

  test("full-text search: select(['id', '_score'])", async () => {
    const rows = await table.search("apple", "fts").limit(5).select(["id", "_score"]).toArray();
    assert.equal(rows.length, 5);
    assert.deepEqual(Object.keys(rows[0]).sort(), ["_score", "id"]);
    for (const r of rows) {
      assert.equal(r.id % 2, 1);
      assert.ok(r._score > 0);
    }
  });

  test("only the appended column is refused", async () => {
    await assert.rejects(
      table.vectorSearch([1, 1, 1]).limit(3).select(["_distance"]).toArray(),
      /besides the columns the query appends/,
    );
  });
});
