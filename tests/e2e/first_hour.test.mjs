// End-to-end, issue 18 "the first hour of a new user" (server side): what a curl user and an
// SDK user meet first.
//  - create/ from JSON ({"schema", "rows"}), with content-type application/json and with
//    curl's default form content-type; JSON errors say what is accepted; JSON sent to a write
//    route without the JSON content-type is told so (not an Arrow parse error).
//  - query/ answers JSON rows with `accept: application/json`, Arrow IPC otherwise (the
//    LanceDB client's requests, `accept: */*`, unchanged: the SDK reads the same rows).
//  - a dynamic projection keeps the order of the request body; the list form "EXPR AS alias"
//    keeps it through the SDK (which sorts the keys of a select({...}) object before sending).
//  - explain_plan/ names the vector column a search used when the request did not.
//  - /readyz: 200 with no reasons on a fresh server and after tables open.
// Table contents are checked value by value.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./lib/server.mjs";
import { rowsOf } from "./lib/rows.mjs";

const DB = "first";

const VECTOR4 = {
  name: "vector",
  nullable: true,
  type: {
    type: "fixed_size_list",
    length: 4,
    fields: [{ name: "item", type: { type: "float" }, nullable: true }],
  },
};
const SCHEMA = {
  fields: [
    { name: "id", type: { type: "int64" }, nullable: false },
    { name: "label", type: { type: "string" }, nullable: true },
    VECTOR4,
  ],
};
const ROWS = [
  { id: 1, label: "a", vector: [0.1, 0.2, 0.3, 0.4] },
  { id: 2, label: "b", vector: [0.2, 0.3, 0.4, 0.5] },
  { id: 3, label: "c", vector: [0.9, 0.8, 0.7, 0.6] },
];

/** POST `route` of `table` with a raw body; returns {status, headers, text, json}. */
async function post(base, table, route, body, headers = {}) {
  const res = await fetch(`${base}/v1/table/${table}/${route}`, {
    method: "POST",
    headers: { "x-lancedb-database": DB, ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const buf = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(buf);
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, buf };
}

const JSON_CT = { "content-type": "application/json" };
const JSON_IO = { "content-type": "application/json", accept: "application/json" };

/** float32-rounded copy of a number (what a float vector column stores). */
const f32 = (x) => Math.fround(x);

describe("first hour: curl and SDK users", () => {
  let server;
  let db;

  before(async () => {
    server = await startServer();
    db = await lancedb.connect(`db://${DB}`, { apiKey: "x", hostOverride: server.url });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("/readyz is 200 with no reasons on a fresh server", async () => {
    const r = await fetch(`${server.url}/readyz`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { ready: true, reads: true, writes: true, reasons: [] });
  });

  test("create/ from JSON: schema + rows; describe/ answers that schema; the rows are there", async () => {
    const r = await post(server.url, "items", "create/", { schema: SCHEMA, rows: ROWS }, JSON_CT);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, {});
    const d = await post(server.url, "items", "describe/", "{}", JSON_CT);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(
      d.json.schema.fields.map((f) => [f.name, f.type.type, f.nullable]),
      [
        ["id", "int64", false],
        ["label", "string", true],
        ["vector", "fixed_size_list", true],
      ],
    );
    assert.equal(d.json.schema.fields[2].type.length, 4);
    // The SDK reads what the JSON created.
    const t = await db.openTable("items");
    const rows = await rowsOf(t.query().select(["id", "label", "vector"]));
    rows.sort((a, b) => a.id - b.id);
    assert.deepEqual(
      rows,
      ROWS.map((r) => ({ ...r, vector: r.vector.map(f32) })),
    );
  });

  test("create/ from JSON with curl's default form content-type and without rows; ?mode and ?primary_key apply", async () => {
    const body = JSON.stringify({ schema: { fields: SCHEMA.fields.slice(0, 2) } });
    const r = await post(server.url, "empty", "create/?primary_key=id", body, {
      "content-type": "application/x-www-form-urlencoded",
    });
    assert.equal(r.status, 200, r.text);
    const t = await db.openTable("empty");
    assert.equal(await t.countRows(), 0);
    const again = await post(server.url, "empty", "create/", body, JSON_CT);
    assert.equal(again.status, 400);
    assert.match(again.json.message, /already exists/);
    const ok = await post(server.url, "empty", "create/?mode=exist_ok", body, JSON_CT);
    assert.equal(ok.status, 200, ok.text);
    // The primary key was declared: an insert of an existing id replaces it.
    for (const label of ["x", "y"]) {
      const ins = await post(server.url, "empty", "insert/", [{ id: 7, label }], JSON_CT);
      assert.equal(ins.status, 200, ins.text);
    }
    assert.deepEqual(await rowsOf(t.query().select(["id", "label"])), [{ id: 7, label: "y" }]);
  });

  test("JSON create errors name the field and say what is accepted; nothing is created", async () => {
    const cases = [
      [{ rows: ROWS }, /needs "schema"/],
      [[{ id: 1 }], /must be an object .*"schema".*an array/],
      [{ schema: SCHEMA, rows: ROWS, mode: "x" }, /unknown key 'mode'/],
      [{ schema: { fields: [{ name: "id", type: { type: "int128" }, nullable: true }] } }, /create: schema.*int128/],
      [{ schema: { fields: [{ name: "id", type: { type: "int64" } }] } }, /create: schema.*nullable/],
      [{ schema: SCHEMA, rows: [{ id: 1, vector: [1, 2, 3] }] }, /create: rows.*row 0, column 'vector': expected 4 values, got 3/],
      [{ schema: SCHEMA, rows: [{ id: 1, colour: "red" }] }, /create: rows.*colour/],
      [{ schema: SCHEMA, rows: { id: 1 } }, /"rows" must be an array/],
      ['{"schema": ', /not valid JSON.*"schema"/],
    ];
    for (const [body, re] of cases) {
      const r = await post(server.url, "bad", "create/", typeof body === "string" ? body : JSON.stringify(body), JSON_CT);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json.error, "invalid_input");
      assert.match(r.json.message, re, JSON.stringify(body));
    }
    assert.deepEqual((await db.tableNames()).sort(), ["empty", "items"]);
  });

  test("JSON rows sent to insert/ without the JSON content-type: a 400 saying what is accepted", async () => {
    const r = await post(server.url, "items", "insert/", JSON.stringify([{ id: 9 }]), {
      "content-type": "application/x-www-form-urlencoded",
    });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /insert: the body looks like JSON but is not sent with content-type: application\/json/);
    assert.match(r.json.message, /create\/ \(\{"schema": \.\.\., "rows": \[\.\.\.\]\}\) and insert\/ \(\[row objects\]\)/);
    assert.equal(await (await db.openTable("items")).countRows(), 3);
  });

  test("query/ with accept: application/json answers JSON rows; without it an Arrow IPC file", async () => {
    const q = { vector: [0.1, 0.2, 0.3, 0.4], k: 2, columns: ["label", "id"] };
    const j = await post(server.url, "items", "query/", q, JSON_IO);
    assert.equal(j.status, 200, j.text);
    assert.match(j.headers.get("content-type"), /^application\/json/);
    assert.equal(j.json.length, 2);
    // Column order: the projection's, then _distance.
    assert.deepEqual(Object.keys(j.json[0]), ["label", "id", "_distance"]);
    assert.deepEqual(
      j.json.map((r) => [r.label, r.id]),
      [
        ["a", 1],
        ["b", 2],
      ],
    );
    assert.equal(j.json[0]._distance, 0);
    const d2 = [0.1, 0.1, 0.1, 0.1].reduce((s, x) => s + f32(x) * f32(x), 0);
    assert.ok(Math.abs(j.json[1]._distance - 0.04) < 1e-6, `${j.json[1]._distance} vs ${d2}`);

    // Vectors as arrays of numbers (float32 values).
    const all = await post(server.url, "items", "query/", { vector: [], k: 10, filter: "id = 3" }, JSON_IO);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json, [{ id: 3, label: "c", vector: [0.9, 0.8, 0.7, 0.6].map(f32) }]);

    // No match: an empty array.
    const none = await post(server.url, "items", "query/", { vector: [], k: 10, filter: "id > 100" }, JSON_IO);
    assert.equal(none.status, 200);
    assert.equal(none.text, "[]");

    // Default (curl's accept: */*): the Arrow IPC file with the same rows.
    for (const accept of [undefined, "*/*", "application/vnd.apache.arrow.file"]) {
      const h = accept ? { ...JSON_CT, accept } : JSON_CT;
      const a = await post(server.url, "items", "query/", q, h);
      assert.equal(a.status, 200);
      assert.equal(a.headers.get("content-type"), "application/vnd.apache.arrow.file");
      assert.equal(new TextDecoder().decode(a.buf.subarray(0, 6)), "ARROW1");
      const t = arrow.tableFromIPC(a.buf);
      assert.deepEqual(t.schema.fields.map((f) => f.name), ["label", "id", "_distance"]);
      assert.deepEqual(Array.from(t.getChild("id").toArray(), Number), [1, 2]);
    }
    // And the SDK (accept: */*) reads them as before.
    const t = await db.openTable("items");
    const sdk = await rowsOf(t.search([0.1, 0.2, 0.3, 0.4]).limit(2).select(["label", "id"]));
    assert.deepEqual(
      sdk.map((r) => [r.label, r.id]),
      [
        ["a", 1],
        ["b", 2],
      ],
    );
  });

  test("a dynamic projection keeps the requested column order (body order; 'EXPR AS alias' through the SDK)", async () => {
    const body = { vector: [], k: 10, filter: "id <= 2", columns: { zeta: "id * 10", alpha: "label", mid: "id + 1" } };
    const j = await post(server.url, "items", "query/", JSON.stringify(body), JSON_IO);
    assert.equal(j.status, 200, j.text);
    assert.deepEqual(j.json.map((r) => Object.keys(r)), [
      ["zeta", "alpha", "mid"],
      ["zeta", "alpha", "mid"],
    ]);
    const sorted = j.json.sort((a, b) => a.zeta - b.zeta);
    assert.deepEqual(sorted, [
      { zeta: 10, alpha: "a", mid: 2 },
      { zeta: 20, alpha: "b", mid: 3 },
    ]);
    // Arrow answer: same order.
    const a = await post(server.url, "items", "query/", JSON.stringify(body), JSON_CT);
    assert.deepEqual(arrow.tableFromIPC(a.buf).schema.fields.map((f) => f.name), ["zeta", "alpha", "mid"]);

    // The SDK sorts a select({...}) object's keys before sending; the list form keeps order.
    const t = await db.openTable("items");
    const listForm = await t
      .query()
      .where("id <= 2")
      .select(["id * 10 AS zeta", "label as alpha", "id + 1 AS mid", "id"])
      .toArray();
    assert.deepEqual(listForm[0] ? Object.keys(listForm[0].toJSON()) : [], ["zeta", "alpha", "mid", "id"]);
    const rows = listForm.map((r) => r.toJSON()).map((r) => ({ zeta: Number(r.zeta), alpha: r.alpha, mid: Number(r.mid), id: Number(r.id) }));
    rows.sort((x, y) => x.id - y.id);
    assert.deepEqual(rows, [
      { zeta: 10, alpha: "a", mid: 2, id: 1 },
      { zeta: 20, alpha: "b", mid: 3, id: 2 },
    ]);

    // An alias may not take the name of a column the query appends, in either form.
    for (const columns of [["id AS _distance"], { _distance: "id" }]) {
      const r = await post(server.url, "items", "query/", { vector: [0.1, 0.2, 0.3, 0.4], k: 1, columns }, JSON_IO);
      assert.equal(r.status, 400, r.text);
      assert.equal(
        r.json.message,
        "columns: output column '_distance' clashes with the column this query appends; choose another alias",
      );
    }
  });

  test("explain_plan/ names the vector column searched when the request did not", async () => {
    const t = await db.openTable("items");
    const plan = await t.search([0.1, 0.2, 0.3, 0.4]).limit(2).explainPlan();
    assert.match(plan, /VectorSearch column=vector distance=l2 k=2 /);
    assert.doesNotMatch(plan, /\(the vector column\)/);
    const r = await post(server.url, "items", "explain_plan/", { query: { vector: [0.1, 0.2, 0.3, 0.4], k: 1 } }, JSON_CT);
    assert.equal(r.status, 200, r.text);
    assert.match(r.json, /VectorSearch column=vector /);
  });

  test("/readyz stays 200 with tables open", async () => {
    const r = await fetch(`${server.url}/readyz`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { ready: true, reads: true, writes: true, reasons: [] });
  });
});
