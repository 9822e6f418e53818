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
