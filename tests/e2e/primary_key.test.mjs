// End-to-end: primary keys declared the Lance way (field metadata
// `lance-schema:unenforced-primary-key` = true) through the real LanceDB Node client, and with
// `?primary_key=` on create/ through raw HTTP. Rows with an equal key replace each other
// (newest wins): counts and values are asserted after every write.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";

const PK = "lance-schema:unenforced-primary-key";
const PK_POS = "lance-schema:unenforced-primary-key:position";
const DIM = 4;

const schemaWithKey = () =>
  new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false, new Map([[PK, "true"]])),
    new arrow.Field("name", new arrow.Utf8(), true),
    new arrow.Field(
      "vector",
      new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)),
      true,
    ),
  ]);

const rows = (ids, tag) => ids.map((id) => ({ id, name: `${tag}${id}`, vector: [id, 0, 0, tag.length] }));

/** id -> name of every row of `table`. */
async function namesById(table) {
  const out = {};
  for (const r of await rowsOf(table.query().select(["id", "name"]))) {
    assert.equal(out[r.id], undefined, `id ${r.id} returned twice`);
    out[r.id] = r.name;
  }
  return out;
}

describe("primary keys through the LanceDB client", () => {
  let server;
  let db;

  before(async () => {
    server = await startServer();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const fetchJson = async (path, body, contentType = "application/json") => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType, "x-api-key": "x", "x-lancedb-database": "e2e" },
      body,
    });
    const text = await res.text();
    return { status: res.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
  };

  test("field metadata declares the key: re-added ids replace, newest wins", async () => {
    // createTable(name, rows, {schema}) of the 0.31.0 client drops field metadata while it
    // converts the rows, so the key is declared with createEmptyTable and the rows added after.
    const table = await db.createEmptyTable("users", schemaWithKey());
    await table.add(rows([1, 2, 3], "a"));
    assert.equal(await table.countRows(), 3);
    // describe/ shows the key metadata on the field.
    const d = await fetchJson("/v1/table/users/describe/", "{}");
    assert.equal(d.status, 200, d.text);
    const idField = d.json.schema.fields.find((f) => f.name === "id");
    assert.equal(idField.metadata?.[PK], "true", d.text);

    await table.add(rows([2, 3, 4], "bb"));
    assert.equal(await table.countRows(), 4);
    assert.deepEqual(await namesById(table), { 1: "a1", 2: "bb2", 3: "bb3", 4: "bb4" });
    // The same ids again: count unchanged, values replaced.
    await table.add(rows([1, 2, 3, 4], "ccc"));
    assert.equal(await table.countRows(), 4);
    assert.deepEqual(await namesById(table), { 1: "ccc1", 2: "ccc2", 3: "ccc3", 4: "ccc4" });
    // A vector search sees each key once, with the newest vector.
    const hits = await rowsOf(table.search([4, 0, 0, 3]).distanceType("l2").limit(10));
    assert.equal(hits.length, 4);
    assert.equal(hits[0].id, 4);
    assert.ok(Math.abs(hits[0]._distance) < 1e-6);
  });

  test("mergeInsert on the key column", async () => {
    const table = await db.openTable("users");
    const res = await table
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(rows([4, 5], "dddd"));
    assert.equal(res.numUpdatedRows, 1);
    assert.equal(res.numInsertedRows, 1);
    assert.equal(await table.countRows(), 5);
    assert.deepEqual(await namesById(table), { 1: "ccc1", 2: "ccc2", 3: "ccc3", 4: "dddd4", 5: "dddd5" });
    // The key column cannot be updated (as LanceDB).
    await assert.rejects(table.update({ values: { id: 9 }, where: "id = 1" }), /primary key/);
  });

  test("a declared key of an unkeyable column is refused naming it", async () => {
    const schema = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field(
        "vector",
        new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)),
        true,
        new Map([[PK, "true"]]),
      ),
    ]);
    await assert.rejects(db.createEmptyTable("bad_key", schema), /vector/);
    assert.ok(!(await db.tableNames()).includes("bad_key"));
  });

  test("?primary_key= on create/ (raw HTTP), composite and in the given order", async () => {
    const schema = new arrow.Schema([
      new arrow.Field("a", new arrow.Int32(), false),
      new arrow.Field("b", new arrow.Utf8(), false),
      new arrow.Field("v", new arrow.Float64(), true),
    ]);
    const ipc = (data) =>
      arrow.tableToIPC(
        new arrow.Table(schema, arrow.makeData({
          type: new arrow.Struct(schema.fields),
          length: data.a.length,
          children: [
            arrow.vectorFromArray(data.a, new arrow.Int32()).data[0],
            arrow.vectorFromArray(data.b, new arrow.Utf8()).data[0],
            arrow.vectorFromArray(data.v, new arrow.Float64()).data[0],
          ],
        })),
        "stream",
      );
    const first = ipc({ a: [1, 1, 2], b: ["x", "y", "x"], v: [1, 2, 3] });
    const created = await fetchJson("/v1/table/pairs/create/?primary_key=b,a", first,
      "application/vnd.apache.arrow.stream");
    assert.equal(created.status, 200, created.text);
    const d = await fetchJson("/v1/table/pairs/describe/", "{}");
    const meta = Object.fromEntries(d.json.schema.fields.map((f) => [f.name, f.metadata ?? {}]));
    assert.deepEqual(meta.b, { [PK]: "true", [PK_POS]: "1" });
    assert.deepEqual(meta.a, { [PK]: "true", [PK_POS]: "2" });
    assert.deepEqual(meta.v, {});

    // Same (b, a) pairs replace; a new pair adds.
    const table = await db.openTable("pairs");
    await table.add([{ a: 1, b: "x", v: 10 }, { a: 3, b: "x", v: 30 }]);
    assert.equal(await table.countRows(), 4);
    const got = (await rowsOf(table.query())).map((r) => `${r.b}${r.a}=${r.v}`).sort();
    assert.deepEqual(got, ["x1=10", "x2=3", "x3=30", "y1=2"]);

    // Errors name the column: unknown, duplicate, conflicting with the metadata.
    const unknown = await fetchJson("/v1/table/p2/create/?primary_key=nope", first,
      "application/vnd.apache.arrow.stream");
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.json.message, /no column 'nope'/);
    const twice = await fetchJson("/v1/table/p2/create/?primary_key=a,a", first,
      "application/vnd.apache.arrow.stream");
    assert.equal(twice.status, 400);
    assert.match(twice.json.message, /column 'a' is listed twice/);
    // overwrite keeps the key of the NEW schema: declared again by the parameter.
    const over = await fetchJson("/v1/table/pairs/create/?mode=overwrite&primary_key=a",
      ipc({ a: [5, 5], b: ["p", "q"], v: [1, 2] }), "application/vnd.apache.arrow.stream");
    assert.equal(over.status, 200, over.text);
    assert.equal(await table.countRows(), 1);
    assert.deepEqual((await rowsOf(table.query())).map((r) => `${r.b}${r.a}`), ["q5"]);
  });

  test("metadata and a different ?primary_key= conflict -> 400", async () => {
    const empty = arrow.tableToIPC(
      new arrow.Table(schemaWithKey(), arrow.makeData({ type: new arrow.Struct(schemaWithKey().fields), length: 0, children: schemaWithKey().fields.map((f) => arrow.makeData({ type: f.type, length: 0, ...(f.type.children?.length ? { child: arrow.makeData({ type: f.type.children[0].type, length: 0 }) } : {}) })) })),
      "stream",
    );
    const r = await fetchJson("/v1/table/conflict/create/?primary_key=name", empty,
      "application/vnd.apache.arrow.stream");
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /primary_key=name differs from the key the schema's field metadata declares \(id\)/);
    const same = await fetchJson("/v1/table/conflict/create/?primary_key=id", empty,
      "application/vnd.apache.arrow.stream");
    assert.equal(same.status, 200, same.text);
  });
});
