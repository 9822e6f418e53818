// End-to-end: schema evolution (add_columns/, alter_columns/, drop_columns/, PROTOCOL.md §5.3)
// with the real LanceDB Node client (@lancedb/lancedb 0.31.0, remote mode) against
// `strata serve`. Expected values are computed here from the rows this file wrote.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { plain, rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";

describe("addColumns / alterColumns / dropColumns with the LanceDB client", () => {
  let server;
  let db;

  before(async () => {
    server = await startServer();
    db = await lancedb.connect("db://cols", { apiKey: "x", hostOverride: server.url });
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  const failWithLog = (e) => {
    e.message += `\n${server.logTail(3000)}`;
    throw e;
  };

  test("add a SQL column, rename it, change a type, drop it", async () => {
    const rows = [];
    for (let id = 1; id <= 20; id++) rows.push({ id, price: id * 1.25, name: `item ${id}` });
    const table = await db.createTable("items", rows).catch(failWithLog);

    await table.addColumns([{ name: "d", valueSql: "price * 2" }]).catch(failWithLog);
    let schema = await table.schema();
    const d = schema.fields.find((f) => f.name === "d");
    assert.ok(d, "column d exists");
    assert.equal(String(d.type), "Float64");
    let got = (await rowsOf(table.query().select(["id", "price", "d"]))).map(plain);
    assert.equal(got.length, 20);
    for (const r of got) assert.equal(r.d, r.id * 1.25 * 2, `row ${r.id}`);
    assert.equal(await table.countRows("d > 40"), 4); // ids 17..20: 42.5, 45, 47.5, 50

    await table.alterColumns([{ path: "d", rename: "dd" }]).catch(failWithLog);
    schema = await table.schema();
    assert.deepEqual(
      schema.fields.map((f) => f.name),
      ["id", "price", "name", "dd"],
    );
    got = (await rowsOf(table.query().where("id = 3").select(["dd"]))).map(plain);
    assert.deepEqual(got, [{ dd: 7.5 }]);

    // The client sends {"type":"int32"}: id (float64 from JS numbers) converts without loss.
    await table.alterColumns([{ path: "id", dataType: "int32" }]).catch(failWithLog);
    schema = await table.schema();
    assert.equal(String(schema.fields.find((f) => f.name === "id").type), "Int32");
    // price (1.25, ...) does not convert to an integer without loss: 400, nothing changes.
    await assert.rejects(table.alterColumns([{ path: "price", dataType: "int64" }]), /400[\s\S]*without loss/);

    await table.dropColumns(["dd"]).catch(failWithLog);
    schema = await table.schema();
    assert.deepEqual(
      schema.fields.map((f) => f.name),
      ["id", "price", "name"],
    );
    assert.equal(await table.countRows(), 20);
    got = (await rowsOf(table.query().where("id = 20"))).map(plain);
    assert.deepEqual(got, [{ id: 20, price: 25, name: "item 20" }]);

    // Rows added after the changes use the new schema.
    await table.add([{ id: 21, price: 1.5, name: "late" }]).catch(failWithLog);
    assert.equal(await table.countRows(), 21);
  });

  test("vector search, FTS, countRows and the version survive add / alter / drop", async () => {
    const WORDS = ["apple", "river", "stone", "cloud"];
    const rows = [];
    for (let id = 0; id < 40; id++) {
      rows.push({
        id,
        price: id + 0.5,
        x: id * 2,
        n: id * 7,
        text: `${WORDS[id % 4]} number ${id}`,
        vector: [id, 40 - id, (id % 5) * 1.5],
      });
    }
    const table = await db.createTable("evolve", rows).catch(failWithLog);
    await table.createIndex("text", { config: lancedb.Index.fts() }).catch(failWithLog);
    const versions = [await table.version()];

    await table.addColumns([{ name: "d", valueSql: "price * 2" }]).catch(failWithLog);
    versions.push(await table.version());
    await table
      .alterColumns([
        { path: "d", rename: "dd" },
        { path: "x", nullable: true },
        { path: "n", dataType: "int64" },
      ])
      .catch(failWithLog);
    versions.push(await table.version());
    let schema = await table.schema();
    assert.deepEqual(
      schema.fields.map((f) => f.name),
      ["id", "price", "x", "n", "text", "vector", "dd"],
    );
    assert.equal(String(schema.fields.find((f) => f.name === "n").type), "Int64");
    assert.equal(schema.fields.find((f) => f.name === "x").nullable, true);
    const got = (await rowsOf(table.query().where("id = 9").select(["n", "dd"]))).map(plain);
    assert.deepEqual(got, [{ n: 63, dd: 19 }]);

    await table.dropColumns(["dd"]).catch(failWithLog);
    versions.push(await table.version());
    schema = await table.schema();
    assert.deepEqual(
      schema.fields.map((f) => f.name),
      ["id", "price", "x", "n", "text", "vector"],
    );
    for (let i = 1; i < versions.length; i++) {
      assert.ok(versions[i] > versions[i - 1], `versions increase: ${versions.join(", ")}`);
    }

    assert.equal(await table.countRows(), 40);
    assert.equal(await table.countRows("n >= 140"), 20); // ids 20..39
    // The nearest neighbour of a stored vector is that row.
    const hit = await rowsOf(table.search([13, 27, 4.5]).select(["id", "n"]).limit(1));
    assert.deepEqual(
      hit.map((r) => ({ id: r.id, n: r.n })),
      [{ id: 13, n: 91 }],
    );
    // The FTS index definition survived the rewrites: exactly the "river" rows (id % 4 == 1).
    const fts = await rowsOf(table.search("river", "fts").select(["id", "text"]).limit(100));
    assert.deepEqual(
      fts.map((r) => r.id).sort((a, b) => a - b),
      rows.filter((r) => r.id % 4 === 1).map((r) => r.id),
    );
    for (const r of fts) assert.ok(r._score > 0);
    const indices = await table.listIndices();
    assert.deepEqual(
      indices.map((i) => i.columns),
      [["text"]],
    );
  });

  test("refusals surface as 400 with the server's reason", async () => {
    const table = await db.createTable("refusals", [{ id: 1, price: 2.0 }]).catch(failWithLog);
    await assert.rejects(table.addColumns([{ name: "price", valueSql: "1" }]), /400[\s\S]*already exists/);
    await assert.rejects(table.addColumns([{ name: "z", valueSql: "NULL" }]), /400[\s\S]*CAST\(NULL AS/);
    await assert.rejects(table.alterColumns([{ path: "nope", rename: "x" }]), /400[\s\S]*unknown column 'nope'/);
    await assert.rejects(table.dropColumns(["id", "price"]), /400[\s\S]*every column/);
    const missing = await db.openTable("refusals").catch(failWithLog);
    await db.dropTable("refusals");
    await assert.rejects(missing.dropColumns(["price"]), /was not found/);
  });
});
