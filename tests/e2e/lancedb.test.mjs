// End-to-end: the real LanceDB Node client (@lancedb/lancedb 0.31.0, remote mode) against
// `strata serve`. Every expected value is computed here, independently of the server:
// rows come from a seeded PRNG and nearest neighbours from exact brute force (lib/vectors.mjs).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { plain, rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";
import { bruteForceTopK, checkTopK, distance, randomVector, rng } from "./lib/vectors.mjs";

const DIM = 8;
const TOL = 1e-4; // relative tolerance for float32 `_distance` against float64 truth

const vectorField = (name = "vector", dim = DIM) =>
  new arrow.Field(name, new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), true);

const SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("label", new arrow.Int32(), true),
  vectorField(),
]);

function makeRows(rand, firstId, n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const id = firstId + i;
    rows.push({ id, label: id % 5, vector: randomVector(rand, DIM) });
  }
  return rows;
}


describe("LanceDB client against strata serve", () => {
  let server;
  let db;
  const rand = rng(20240601);
  const items = makeRows(rand, 0, 200); // table "items"
  const byId = new Map();

  const connect = () =>
    lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });

  before(async () => {
    server = await startServer();
    db = await connect();
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  const failWithLog = (e) => {
    e.message += `\n${server.logTail(3000)}`;
    throw e;
  };

  test("connect and tableNames on an empty database", async () => {
    assert.deepEqual(await db.tableNames(), []);
  });

  test("createTable from rows with a schema; countRows; tableNames", async () => {
    const t = await db.createTable("items", items, { schema: SCHEMA }).catch(failWithLog);
    for (const r of items) byId.set(r.id, r);
    assert.equal(await t.countRows(), 200);
    assert.equal(await t.countRows("label = 3"), 40);
    assert.equal(await t.countRows("label = 7"), 0);
    assert.deepEqual(await db.tableNames(), ["items"]);
  });

  test("schema() round-trips names, types, nullability and dimension", async () => {
    const t = await db.openTable("items");
    const s = await t.schema();
    assert.deepEqual(
      s.fields.map((f) => f.name),
      ["id", "label", "vector"],
    );
    assert.ok(arrow.DataType.isInt(s.fields[0].type));
    assert.equal(s.fields[0].type.bitWidth, 64);
    assert.equal(s.fields[0].type.isSigned, true);
    assert.equal(s.fields[0].nullable, false);
    assert.equal(s.fields[1].type.bitWidth, 32);
    assert.equal(s.fields[1].nullable, true);
    const vt = s.fields[2].type;
    assert.ok(arrow.DataType.isFixedSizeList(vt));
    assert.equal(vt.listSize, DIM);
    assert.ok(arrow.DataType.isFloat(vt.children[0].type));
    assert.equal(vt.children[0].type.precision, arrow.Precision.SINGLE);
  });

  test("add appends rows that are immediately visible", async () => {
    const t = await db.openTable("items");
    const more = makeRows(rand, 200, 50);
    await t.add(more);
    for (const r of more) byId.set(r.id, r);
    assert.equal(await t.countRows(), 250);
    assert.equal(await t.countRows("label = 3"), 50);
    assert.equal(await t.countRows("id = 249"), 1);
  });

  test("plain query returns every row with its values", async () => {
    const t = await db.openTable("items");
    const rows = await rowsOf(t.query());
    assert.equal(rows.length, 250);
    const ids = rows.map((r) => r.id).sort((a, b) => a - b);
    assert.deepEqual(ids, [...byId.keys()].sort((a, b) => a - b));
    for (const r of rows) {
      const want = byId.get(r.id);
      assert.equal(r.label, want.label, `label of id ${r.id}`);
      assert.deepEqual(r.vector, want.vector, `vector of id ${r.id}`);
    }
  });

  test("plain query with limit and offset pages through the table", async () => {
    const t = await db.openTable("items");
    const full = (await rowsOf(t.query().select(["id"]))).map((r) => r.id);
    assert.equal(full.length, 250);
    const page = (await rowsOf(t.query().select(["id"]).limit(10).offset(5))).map((r) => r.id);
    assert.deepEqual(page, full.slice(5, 15));
    const seen = [];
    for (let off = 0; off < 250; off += 64) {
      const p = await rowsOf(t.query().select(["id"]).limit(64).offset(off));
      assert.deepEqual(Object.keys(p[0]), ["id"]);
      assert.equal(p.length, Math.min(64, 250 - off));
      seen.push(...p.map((r) => r.id));
    }
    assert.deepEqual(seen, full);
    assert.equal((await rowsOf(t.query().limit(10).offset(250))).length, 0);
    assert.equal((await rowsOf(t.query().limit(3))).length, 3);
  });

  for (const dt of ["l2", "cosine", "dot"]) {
    test(`vector search, distance ${dt}: exact ids and _distance`, async () => {
      const t = await db.openTable("items");
      const all = [...byId.values()];
      const qrand = rng(dt.length * 7919);
      for (let qi = 0; qi < 5; qi++) {
        const q = randomVector(qrand, DIM);
        for (const k of [1, 7, 20]) {
          const res = await rowsOf(t.search(q).distanceType(dt).limit(k).select(["id", "label"]));
          assert.equal(res.length, k);
          for (const r of res) {
            assert.deepEqual(Object.keys(r).sort(), ["_distance", "id", "label"]);
            assert.equal(r.label, byId.get(r.id).label);
          }
          const exact = bruteForceTopK(dt, all, q, k + 1);
          const problems = checkTopK(
            res.map((r) => ({ id: r.id, distance: r._distance })),
            exact,
            k,
            (id) => (byId.has(id) ? distance(dt, q, byId.get(id).vector) : undefined),
            TOL,
          );
          assert.deepEqual(problems, [], `query ${qi} k=${k} ${dt}`);
          // Random float data has no near-ties: the order must match exactly too.
          assert.deepEqual(
            res.map((r) => r.id),
            exact.slice(0, k).map((e) => e.id),
          );
        }
      }
    });
  }

  test("vector search defaults to l2 and k=10; select of the vector column returns its values", async () => {
    const t = await db.openTable("items");
    const q = randomVector(rng(5), DIM);
    const res = await rowsOf(t.search(q));
    assert.equal(res.length, 10);
    const exact = bruteForceTopK("l2", [...byId.values()], q, 10);
    assert.deepEqual(
      res.map((r) => r.id),
      exact.map((e) => e.id),
    );
    for (const r of res) {
      assert.deepEqual(r.vector, byId.get(r.id).vector);
      assert.equal(r.label, byId.get(r.id).label);
    }
    const onlyVec = await rowsOf(t.query().nearestTo(q).limit(2).select(["vector"]));
    assert.deepEqual(Object.keys(onlyVec[0]).sort(), ["_distance", "vector"]);
    assert.deepEqual(onlyVec[0].vector, byId.get(exact[0].id).vector);
    // A query equal to a stored vector finds it at distance 0.
    const self = byId.get(123);
    const hit = await rowsOf(t.search(self.vector).limit(1).select(["id"]));
    assert.equal(hit[0].id, 123);
    assert.ok(Math.abs(hit[0]._distance) < 1e-6);
  });

  test("createEmptyTable from an Arrow schema, then add", async () => {
    const schema = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), true),
      new arrow.Field("name", new arrow.Utf8(), true),
      vectorField("vector", 4),
    ]);
    const t = await db.createEmptyTable("empty_t", schema).catch(failWithLog);
    assert.equal(await t.countRows(), 0);
    assert.deepEqual(await rowsOf(t.query()), []);
    const s = await t.schema();
    assert.deepEqual(
      s.fields.map((f) => `${f.name}:${f.type}`),
      ["id:Int64", "name:Utf8", "vector:FixedSizeList[4]<Float32>"],
    );
    assert.deepEqual((await db.tableNames()).sort(), ["empty_t", "items"]);
    await t.add([
      { id: 10, name: "ten", vector: [1, 0, 0, 0] },
      { id: 11, name: "eleven", vector: [0, 1, 0, 0] },
      { id: 12, name: null, vector: [0, 0, 2, 0] },
    ]);
    assert.equal(await t.countRows(), 3);
    const rows = (await rowsOf(t.query())).sort((a, b) => a.id - b.id);
    assert.deepEqual(rows, [
      { id: 10, name: "ten", vector: [1, 0, 0, 0] },
      { id: 11, name: "eleven", vector: [0, 1, 0, 0] },
      { id: 12, name: null, vector: [0, 0, 2, 0] },
    ]);
    // l2 from (0,0,1,0): id 12 at 1, ids 10 and 11 at 2.
    const res = await rowsOf(t.search([0, 0, 1, 0]).limit(3).select(["id", "name"]));
    assert.equal(res[0].id, 12);
    assert.equal(res[0]._distance, 1);
    assert.deepEqual(
      res.slice(1).map((r) => r.id).sort(),
      [10, 11],
    );
    assert.deepEqual(
      res.map((r) => r._distance),
      [1, 2, 2],
    );
    // dot: 1 - q.v; cosine: 1 - cos.
    const dot = await rowsOf(t.search([0, 0, 1, 0]).distanceType("dot").limit(1).select(["id"]));
    assert.deepEqual(dot, [{ id: 12, _distance: -1 }]);
    const cos = await rowsOf(t.search([0, 0, 1, 0]).distanceType("cosine").limit(1).select(["id"]));
    assert.equal(cos[0].id, 12);
    assert.ok(Math.abs(cos[0]._distance) < 1e-6);
  });

  test("openTable of a missing table is TableNotFound", async () => {
    await assert.rejects(db.openTable("no_such_table"), /Table 'no_such_table' was not found/);
  });

  test("createTable of an existing table fails with 'already exists'; existOk opens it", async () => {
    await assert.rejects(db.createTable("items", makeRows(rng(1), 0, 2), { schema: SCHEMA }), /already exists/);
    const t = await db.openTable("items");
    assert.equal(await t.countRows(), 250, "the failed create changed nothing");
    const again = await db.createTable("items", makeRows(rng(1), 0, 2), { schema: SCHEMA, existOk: true });
    assert.equal(await again.countRows(), 250);
  });

  test("createTable mode overwrite replaces schema and data", async () => {
    await db.createTable("ow", [{ a: 1, vector: [1, 2] }]);
    const t = await db.createTable("ow", [{ b: "x" }, { b: "y" }], { mode: "overwrite" });
    assert.equal(await t.countRows(), 2);
    const s = await t.schema();
    assert.deepEqual(
      s.fields.map((f) => f.name),
      ["b"],
    );
    assert.deepEqual((await rowsOf(t.query())).map((r) => r.b).sort(), ["x", "y"]);
  });

  test("dropTable removes the table", async () => {
    await db.dropTable("empty_t");
    await db.dropTable("ow");
    assert.deepEqual(await db.tableNames(), ["items"]);
    await assert.rejects(db.openTable("empty_t"), /was not found/);
    const t = await db.createEmptyTable("empty_t", new arrow.Schema([vectorField("vector", 4)]));
    assert.equal(await t.countRows(), 0, "a re-created table starts empty");
    await db.dropTable("empty_t");
  });

  test("tables and rows survive a restart", async () => {
    await server.restart();
    db = await connect();
    assert.deepEqual(await db.tableNames(), ["items"]);
    const t = await db.openTable("items");
    assert.equal(await t.countRows(), 250);
    assert.equal(await t.countRows("label = 0"), 50);
    const q = randomVector(rng(99), DIM);
    const res = await rowsOf(t.search(q).limit(5).select(["id"]));
    assert.deepEqual(
      res.map((r) => r.id),
      bruteForceTopK("l2", [...byId.values()], q, 5).map((e) => e.id),
    );
  });
});
