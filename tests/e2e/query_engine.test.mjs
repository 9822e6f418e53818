// End-to-end: the query engine of issue 5 (SQL filters, projections, `_rowid` / `_rowoffset`,
// takes, prefilter / postfilter, distance ranges, k bounds, bad queries, update/, delete/,
// merge_insert/, hybrid search, explain_plan/ and analyze_plan/) with the real LanceDB Node
// client (@lancedb/lancedb 0.31.0, remote mode) against `strata serve`.
// Every expected value is computed here, independently of the server: filters are re-evaluated
// as JavaScript predicates over the rows this file generated, nearest neighbours by brute force
// (lib/vectors.mjs), hybrid ranks by Reciprocal Rank Fusion over the exact vector ranking and
// the BM25 order the texts are designed to have.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { plain, rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";
import { bruteForceTopK, distance, randomVector, rng } from "./lib/vectors.mjs";

const DAY_MS = 86400000;
const utcDay = (y, m, d) => Date.UTC(y, m - 1, d);

const vectorField = (name, dim) =>
  new arrow.Field(name, new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), true);

const ids = (rows) => rows.map((r) => r.id).sort((a, b) => a - b);

/** The `message` of the server's JSON error body quoted inside a client error, else the whole text. */
function serverMessage(e) {
  const m = /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(e.message);
  return m ? JSON.parse(`"${m[1]}"`) : e.message;
}

/** Asserts that `promise` rejects with a 400 whose server message matches every regex in `patterns`. */
async function rejects400(promise, patterns, what) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: expected an error, the call succeeded`);
  assert.match(err.message, /400/, `${what}: expected HTTP 400, got: ${err.message.slice(0, 600)}`);
  const msg = serverMessage(err);
  for (const p of patterns) assert.match(msg, p, `${what}: server message ${JSON.stringify(msg)}`);
  return msg;
}

describe("query engine with the LanceDB client against strata serve", () => {
  let server;
  let db;

  const connect = () => lancedb.connect("db://qe", { apiKey: "x", hostOverride: server.url });

  const failWithLog = (e) => {
    e.message += `\n${server.logTail(3000)}`;
    throw e;
  };

  /** POST a route with fetch (Strata extensions such as flush/); returns {status, body}. */
  async function post(table, route, body) {
    const res = await fetch(`${server.url}/v1/table/${encodeURIComponent(table)}/${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-lancedb-database": "qe", "x-api-key": "x" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  }

  async function flush(table) {
    const r = await post(table, "flush/", {});
    assert.equal(r.status, 200, `flush of ${table}: ${r.text}`);
    return r.json;
  }

  before(async () => {
    server = await startServer();
    db = await connect();
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  // ------------------------------------------------------------------------------------------
  // SQL filters over scalar columns.
  // ------------------------------------------------------------------------------------------
  describe("where() filters", () => {
    const N = 30;
    const NAMES = [
      "Apple", "banana", "Cherry", "date fruit", "Elderberry", "fig", "Grape", "honeydew", "Kiwi's", "lemon",
      "Mango", "nectarine", "Orange", "papaya", "Quince", "raspberry", "Strawberry", "tangerine", "Ugli", "vanilla",
    ];
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("name", new arrow.Utf8(), true),
      new arrow.Field("price", new arrow.Float64(), true),
      new arrow.Field("n", new arrow.Int32(), true),
      new arrow.Field("flag", new arrow.Bool(), true),
      new arrow.Field("day", new arrow.DateDay(), true),
      new arrow.Field("unit price", new arrow.Float64(), true),
      vectorField("vector", 4),
    ]);
    const rand = rng(777);
    const rows = [];
    for (let id = 1; id <= N; id++) {
      rows.push({
        id,
        name: id % 10 === 0 ? null : NAMES[(id * 7) % NAMES.length],
        price: id % 7 === 0 ? null : id * 1.5,
        n: id % 4,
        flag: id % 2 === 0,
        day: new Date(utcDay(2024, 1, 1) + id * 5 * DAY_MS),
        "unit price": id * 0.25,
        vector: randomVector(rand, 4),
      });
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    const dayMs = (r) => r.day.getTime();
    const nn = (v) => v !== null && v !== undefined;
    let t;

    before(async () => {
      t = await db.createTable("f", rows, { schema: SCHEMA }).catch(failWithLog);
    });

    // [SQL filter, JS predicate] pairs; the predicate is SQL's three-valued logic written out
    // (a comparison with NULL is not true, so the row is not selected).
    const CASES = [
      ["id = 3", (r) => r.id === 3],
      ["id != 3", (r) => r.id !== 3],
      ["id <> 3", (r) => r.id !== 3],
      ["id < 4", (r) => r.id < 4],
      ["id <= 4", (r) => r.id <= 4],
      ["id > 27", (r) => r.id > 27],
      ["id >= 27", (r) => r.id >= 27],
      ["3 > id", (r) => r.id < 3],
      ["price > 30", (r) => nn(r.price) && r.price > 30],
      ["price >= 9 AND n = 2", (r) => nn(r.price) && r.price >= 9 && r.n === 2],
      ["n = 1 OR n = 3", (r) => r.n === 1 || r.n === 3],
      ["n = 0 OR price > 40", (r) => r.n === 0 || (nn(r.price) && r.price > 40)],
      ["(n = 1 OR n = 2) AND id < 10", (r) => (r.n === 1 || r.n === 2) && r.id < 10],
      ["n = 1 OR n = 2 AND id < 10", (r) => r.n === 1 || (r.n === 2 && r.id < 10)],
      ["NOT (n = 1)", (r) => r.n !== 1],
      ["NOT (price > 10)", (r) => nn(r.price) && !(r.price > 10)],
      ["NOT flag", (r) => r.flag === false],
      ["flag", (r) => r.flag === true],
      ["flag = true AND id < 9", (r) => r.flag && r.id < 9],
      ["flag = false", (r) => r.flag === false],
      ["id IN (1, 5, 9, 100)", (r) => [1, 5, 9].includes(r.id)],
      ["id NOT IN (1, 5, 9)", (r) => ![1, 5, 9].includes(r.id)],
      ["name IN ('fig', 'Orange', 'none')", (r) => ["fig", "Orange"].includes(r.name)],
      ["name NOT IN ('fig', 'Orange')", (r) => nn(r.name) && !["fig", "Orange"].includes(r.name)],
      ["id BETWEEN 4 AND 8", (r) => r.id >= 4 && r.id <= 8],
      ["id NOT BETWEEN 4 AND 28", (r) => r.id < 4 || r.id > 28],
      ["price BETWEEN 10 AND 20", (r) => nn(r.price) && r.price >= 10 && r.price <= 20],
      ["price IS NULL", (r) => r.price === null],
      ["price IS NOT NULL", (r) => r.price !== null],
      ["name IS NULL OR price IS NULL", (r) => r.name === null || r.price === null],
      ["name IS NOT NULL AND id > 25", (r) => r.name !== null && r.id > 25],
      ["name LIKE '%an%'", (r) => nn(r.name) && r.name.includes("an")],
      ["name LIKE '_i%'", (r) => nn(r.name) && /^.i/s.test(r.name)],
      ["name LIKE 'Kiwi''s'", (r) => r.name === "Kiwi's"],
      ["name NOT LIKE '%e%'", (r) => nn(r.name) && !r.name.includes("e")],
      ["name = 'Kiwi''s'", (r) => r.name === "Kiwi's"],
      ["id * 2 + 1 > 50", (r) => r.id * 2 + 1 > 50],
      ["price / 3 < 2", (r) => nn(r.price) && r.price / 3 < 2],
      ["id - n = 8", (r) => r.id - r.n === 8],
      ["price * 2 = id * 3", (r) => nn(r.price) && r.price * 2 === r.id * 3],
      ["id / 4 = 2", (r) => Math.trunc(r.id / 4) === 2], // integer division truncates (DataFusion)
      ["-id < -28", (r) => -r.id < -28],
      ["lower(name) = 'apple'", (r) => nn(r.name) && r.name.toLowerCase() === "apple"],
      ["upper(name) = 'FIG'", (r) => nn(r.name) && r.name.toUpperCase() === "FIG"],
      ["lower(name) LIKE 'm%'", (r) => nn(r.name) && r.name.toLowerCase().startsWith("m")],
      ["starts_with(name, 'S')", (r) => nn(r.name) && r.name.startsWith("S")],
      ["length(name) = 4", (r) => nn(r.name) && r.name.length === 4],
      ["char_length(name) > 9", (r) => nn(r.name) && r.name.length > 9],
      ["regexp_match(name, '^[A-Z].*y$')", (r) => nn(r.name) && /^[A-Z].*y$/.test(r.name)],
      ["regexp_match(name, 'an+a')", (r) => nn(r.name) && /an+a/.test(r.name)],
      ["day >= date '2024-04-01'", (r) => dayMs(r) >= utcDay(2024, 4, 1)],
      ["day < date '2024-02-01'", (r) => dayMs(r) < utcDay(2024, 2, 1)],
      ["day = date '2024-01-16'", (r) => dayMs(r) === utcDay(2024, 1, 16)],
      [
        "day BETWEEN date '2024-02-01' AND date '2024-03-01'",
        (r) => dayMs(r) >= utcDay(2024, 2, 1) && dayMs(r) <= utcDay(2024, 3, 1),
      ],
      ["CAST(id AS VARCHAR) = '12'", (r) => r.id === 12],
      ["CAST(n AS DOUBLE) / 2 = 0.5", (r) => r.n === 1],
      ["CAST('7' AS BIGINT) = id", (r) => r.id === 7],
      ["CAST(price AS BIGINT) = 6", (r) => nn(r.price) && Math.trunc(r.price) === 6],
      ["`unit price` > 6.5", (r) => r["unit price"] > 6.5],
      ["`unit price` * 4 = id AND id < 3", (r) => r.id < 3],
      ["`id` = 17", (r) => r.id === 17],
    ];

    for (const [sql, pred] of CASES) {
      test(`where ${sql}`, async () => {
        const want = ids(rows.filter(pred));
        const got = await rowsOf(t.query().where(sql).select(["id"]));
        assert.deepEqual(ids(got), want, `query().where(${JSON.stringify(sql)})`);
        for (const r of got) assert.deepEqual(Object.keys(r), ["id"]);
      });
    }

    test("countRows(filter) equals the number of matching rows", async () => {
      for (const [sql, pred] of CASES.slice(0, 40)) {
        assert.equal(await t.countRows(sql), rows.filter(pred).length, `countRows(${JSON.stringify(sql)})`);
      }
      assert.equal(await t.countRows(), N);
    });

    test("where() returns every column with its stored values", async () => {
      const got = (await t.query().where("id IN (3, 10, 14)").toArray()).map(plain);
      assert.deepEqual(ids(got), [3, 10, 14]);
      for (const r of got) {
        const w = byId.get(r.id);
        assert.equal(r.name, w.name);
        assert.equal(r.price, w.price);
        assert.equal(r.n, w.n);
        assert.equal(r.flag, w.flag);
        assert.equal(new Date(r.day).getTime(), w.day.getTime());
        assert.equal(r["unit price"], w["unit price"]);
        assert.deepEqual(r.vector, w.vector);
      }
    });

    test("select with a list keeps exactly those columns in that order", async () => {
      const got = await rowsOf(t.query().where("id < 4").select(["name", "id"]));
      assert.equal(got.length, 3);
      for (const r of got) {
        assert.deepEqual(Object.keys(r), ["name", "id"]);
        assert.equal(r.name, byId.get(r.id).name);
      }
    });

    test("select with an alias map computes SQL expressions", async () => {
      const got = await rowsOf(
        t.query().where("id <= 8").select({ double_price: "price * 2", id: "id", up: "upper(name)", next: "id + 1" }),
      );
      assert.equal(got.length, 8);
      for (const r of got) {
        assert.deepEqual(Object.keys(r).sort(), ["double_price", "id", "next", "up"]);
        const w = byId.get(r.id);
        assert.equal(r.double_price, w.price === null ? null : w.price * 2, `double_price of ${r.id}`);
        assert.equal(r.up, w.name === null ? null : w.name.toUpperCase(), `up of ${r.id}`);
        assert.equal(r.next, r.id + 1);
      }
    });

    test("limit and offset page through a filtered scan", async () => {
      const full = (await rowsOf(t.query().where("n = 1 OR n = 2").select(["id"]))).map((r) => r.id);
      assert.deepEqual([...full].sort((a, b) => a - b), ids(rows.filter((r) => r.n === 1 || r.n === 2)));
      const page = (await rowsOf(t.query().where("n = 1 OR n = 2").select(["id"]).limit(4).offset(3))).map((r) => r.id);
      assert.deepEqual(page, full.slice(3, 7));
      const tail = await rowsOf(t.query().where("n = 1 OR n = 2").select(["id"]).offset(full.length - 2));
      assert.deepEqual(
        tail.map((r) => r.id),
        full.slice(-2),
      );
      assert.equal((await rowsOf(t.query().where("id > 1000").limit(5))).length, 0);
    });

    test("a filter naming an unknown column is a 400 naming the column and its position", async () => {
      await rejects400(t.query().where("nosuch = 1").toArray(), [/nosuch/, /position/i], "unknown column");
      await rejects400(t.query().where("id > 3 AND bogus_col < 2").toArray(), [/bogus_col/, /position/i], "unknown column");
      await rejects400(t.countRows("nosuch = 1"), [/nosuch/], "countRows with an unknown column");
      await rejects400(t.search([0, 0, 0, 0]).where("nosuch = 1").toArray(), [/nosuch/], "vector search filter");
    });

    test("a syntax error is a 400 naming the position", async () => {
      await rejects400(t.query().where("id = = 3").toArray(), [/position/i], "id = = 3");
      await rejects400(t.query().where("id IN (1, 2").toArray(), [/position/i], "unclosed IN list");
      await rejects400(t.query().where("name = 'abc").toArray(), [/position/i], "unterminated string");
    });
  });

  // ------------------------------------------------------------------------------------------
  // Nested struct fields and list columns.
  // ------------------------------------------------------------------------------------------
  describe("struct fields and list columns", () => {
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field(
        "info",
        new arrow.Struct([new arrow.Field("score", new arrow.Int32(), true), new arrow.Field("label", new arrow.Utf8(), true)]),
        true,
      ),
      new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
    ]);
    const TAGS = [["red", "blue"], ["green"], []];
    const rows = [];
    for (let id = 1; id <= 15; id++) {
      rows.push({
        id,
        info: { score: (id * 3) % 10, label: `L${id % 3}` },
        tags: id === 5 ? null : TAGS[id % 3],
      });
    }
    let t;
    before(async () => {
      t = await db.createTable("nest", rows, { schema: SCHEMA }).catch(failWithLog);
    });

    const CASES = [
      ["info.score > 5", (r) => r.info.score > 5],
      ["info.label = 'L1' AND info.score < 5", (r) => r.info.label === "L1" && r.info.score < 5],
      ["info.score IN (0, 3)", (r) => [0, 3].includes(r.info.score)],
      ["array_has(tags, 'red')", (r) => r.tags !== null && r.tags.includes("red")],
      ["array_contains(tags, 'green')", (r) => r.tags !== null && r.tags.includes("green")],
      ["NOT array_has(tags, 'red')", (r) => r.tags !== null && !r.tags.includes("red")],
      ["array_has(tags, 'blue') AND info.score >= 5", (r) => r.tags !== null && r.tags.includes("blue") && r.info.score >= 5],
      ["tags IS NULL", (r) => r.tags === null],
    ];
    for (const [sql, pred] of CASES) {
      test(`where ${sql}`, async () => {
        const got = await rowsOf(t.query().where(sql).select(["id"]));
        assert.deepEqual(ids(got), ids(rows.filter(pred)), `where(${JSON.stringify(sql)})`);
      });
    }
    test("an unknown struct field is a 400 naming it", async () => {
      await rejects400(t.query().where("info.nosuch = 1").toArray(), [/nosuch/], "info.nosuch");
    });
  });

  // ------------------------------------------------------------------------------------------
  // _rowid, _rowoffset, takeRowIds, takeOffsets.
  // ------------------------------------------------------------------------------------------
  describe("_rowid and takes", () => {
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("name", new arrow.Utf8(), true),
      vectorField("vector", 2),
    ]);
    const rand = rng(99);
    const rows = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `r${i + 1}`, vector: randomVector(rand, 2) }));
    let t;
    let rowIdOf; // id -> bigint _rowid before the flush

    before(async () => {
      t = await db.createTable("rid", rows, { schema: SCHEMA }).catch(failWithLog);
    });

    async function rowIdMap() {
      const tbl = await t.query().withRowId().select(["id"]).toArrow();
      const f = tbl.schema.fields.find((x) => x.name === "_rowid");
      assert.ok(f, `no _rowid column in ${tbl.schema.fields.map((x) => x.name)}`);
      assert.ok(arrow.DataType.isInt(f.type) && f.type.bitWidth === 64 && !f.type.isSigned, `_rowid type ${f.type}`);
      const m = new Map();
      for (const r of tbl.toArray()) {
        assert.equal(typeof r._rowid, "bigint");
        m.set(Number(r.id), r._rowid);
      }
      return m;
    }

    test("withRowId returns unique uint64 _rowid values (generation << 32 | position)", async () => {
      rowIdOf = await rowIdMap();
      assert.equal(rowIdOf.size, 10);
      const vals = [...rowIdOf.values()];
      assert.equal(new Set(vals).size, 10, "duplicate _rowid");
      // One write into one MemTable: one generation, positions 0..9 in insertion order.
      const gens = new Set(vals.map((v) => v >> 32n));
      assert.equal(gens.size, 1, `generations ${[...gens]}`);
      for (const r of rows) assert.equal(rowIdOf.get(r.id) & 0xffffffffn, BigInt(r.id - 1), `position of id ${r.id}`);
      // withRowId on a vector search too.
      const v = await t.search(rows[4].vector).withRowId().limit(1).toArray();
      assert.equal(Number(v[0].id), 5);
      assert.equal(v[0]._rowid, rowIdOf.get(5));
    });

    test("_rowid is stable across a flush", async () => {
      await flush("rid");
      const after = await rowIdMap();
      assert.deepEqual([...after.entries()].sort((a, b) => a[0] - b[0]), [...rowIdOf.entries()].sort((a, b) => a[0] - b[0]));
    });

    test("takeRowIds returns exactly those rows; _rowid IN (...) too", async () => {
      const want = [3, 7, 10];
      const got = await rowsOf(t.takeRowIds(want.map((id) => rowIdOf.get(id))).select(["id", "name"]));
      assert.deepEqual(ids(got), want);
      for (const r of got) assert.equal(r.name, `r${r.id}`);
      const list = want.map((id) => rowIdOf.get(id).toString()).join(", ");
      assert.deepEqual(ids(await rowsOf(t.query().where(`_rowid IN (${list})`).select(["id"]))), want);
      // An address that holds no row returns nothing.
      const none = (rowIdOf.get(1) >> 32n) * (1n << 32n) + 1000n;
      assert.deepEqual(await rowsOf(t.takeRowIds([none])), []);
    });

    test("takeOffsets([0, 2]) returns the 1st and 3rd rows; _rowoffset filters", async () => {
      const order = (await rowsOf(t.query().select(["id"]))).map((r) => r.id);
      assert.equal(order.length, 10);
      const got = (await rowsOf(t.takeOffsets([0, 2]).select(["id"]))).map((r) => r.id);
      assert.deepEqual(got.sort((a, b) => a - b), [order[0], order[2]].sort((a, b) => a - b));
      const first3 = (await rowsOf(t.query().where("_rowoffset < 3").select(["id"]))).map((r) => r.id);
      assert.deepEqual(first3.sort((a, b) => a - b), order.slice(0, 3).sort((a, b) => a - b));
    });

    test("an update gives the row a new _rowid; the old address no longer returns it", async () => {
      const old = rowIdOf.get(3);
      const res = await t.update({ where: "id = 3", values: { name: "changed" } });
      assert.equal(res.rowsUpdated, 1);
      const now = await rowIdMap();
      assert.equal(now.size, 10);
      assert.notEqual(now.get(3), old);
      for (const [id, rid] of rowIdOf) if (id !== 3) assert.equal(now.get(id), rid, `_rowid of untouched id ${id}`);
      assert.deepEqual(await rowsOf(t.takeRowIds([old])), []);
      const fresh = await rowsOf(t.takeRowIds([now.get(3)]).select(["id", "name"]));
      assert.deepEqual(fresh, [{ id: 3, name: "changed" }]);
    });
  });

  // ------------------------------------------------------------------------------------------
  // Vector search: prefilter / postfilter, distance ranges, distance types, k bounds, index.
  // ------------------------------------------------------------------------------------------
  describe("vector search", () => {
    const DIM = 4;
    const N = 2000;
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("cat", new arrow.Int32(), true),
      vectorField("vector", DIM),
    ]);
    const rand = rng(31337);
    const rows = Array.from({ length: N }, (_, i) => ({ id: i, cat: i % 10, vector: randomVector(rand, DIM) }));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const queries = Array.from({ length: 4 }, () => randomVector(rand, DIM));
    let t;

    before(async () => {
      // Rows spread over tiers: 1000 in an SSTable, 1000 in the MemTable.
      t = await db.createTable("vs", rows.slice(0, 500), { schema: SCHEMA }).catch(failWithLog);
      await t.add(rows.slice(500, 1000));
      await flush("vs");
      await t.add(rows.slice(1000, 1500));
      await t.add(rows.slice(1500));
    });

    test("prefilter (default) returns k rows that pass the filter, equal to exact search over them", async () => {
      for (const q of queries) {
        const got = await rowsOf(t.search(q).where("cat = 3").select(["id", "cat"]).limit(10));
        const want = bruteForceTopK("l2", rows.filter((r) => r.cat === 3), q, 10);
        assert.deepEqual(
          got.map((r) => r.id),
          want.map((w) => w.id),
        );
        for (const r of got) assert.equal(r.cat, 3);
      }
    });

    test("postfilter filters the unfiltered top-k, so it returns fewer rows than the prefilter", async () => {
      let pre = 0;
      let postTotal = 0;
      for (const q of queries) {
        const got = await rowsOf(t.search(q).where("cat = 3").postfilter().select(["id", "cat"]).limit(10));
        const top = bruteForceTopK("l2", rows, q, 10);
        const want = top.filter((w) => byId.get(w.id).cat === 3).map((w) => w.id);
        assert.deepEqual(
          got.map((r) => r.id),
          want,
        );
        postTotal += got.length;
        pre += (await rowsOf(t.search(q).where("cat = 3").select(["id"]).limit(10))).length;
      }
      assert.equal(pre, 40);
      assert.ok(postTotal < pre, `postfilter ${postTotal} rows, prefilter ${pre}`);
    });

    test("distanceRange(lower, upper): every _distance in [lower, upper), exactly the rows between", async () => {
      for (const q of queries) {
        const exact = bruteForceTopK("l2", rows, q, 60);
        const lower = (exact[4].distance + exact[5].distance) / 2;
        const upper = (exact[49].distance + exact[50].distance) / 2;
        const got = await rowsOf(t.search(q).distanceRange(lower, upper).select(["id"]).limit(100));
        assert.deepEqual(
          got.map((r) => r.id),
          exact.slice(5, 50).map((e) => e.id),
        );
        for (const r of got) assert.ok(r._distance >= lower && r._distance < upper, `_distance ${r._distance}`);
        // Only an upper bound, and only a lower bound.
        const below = await rowsOf(t.search(q).distanceRange(undefined, upper).select(["id"]).limit(100));
        assert.deepEqual(
          below.map((r) => r.id),
          exact.slice(0, 50).map((e) => e.id),
        );
        const above = await rowsOf(t.search(q).distanceRange(lower).select(["id"]).limit(3));
        assert.deepEqual(
          above.map((r) => r.id),
          exact.slice(5, 8).map((e) => e.id),
        );
      }
    });

    for (const dt of ["cosine", "dot"]) {
      test(`distanceType ${dt} with a filter equals exact search over the filtered rows`, async () => {
        for (const q of queries) {
          const got = await rowsOf(t.search(q).distanceType(dt).where("cat < 3 AND id > 100").select(["id"]).limit(15));
          const want = bruteForceTopK(dt, rows.filter((r) => r.cat < 3 && r.id > 100), q, 15);
          assert.deepEqual(
            got.map((r) => r.id),
            want.map((w) => w.id),
          );
          for (let i = 0; i < got.length; i++) {
            const d = distance(dt, q, byId.get(got[i].id).vector);
            assert.ok(Math.abs(got[i]._distance - d) <= 1e-4 * Math.max(1, Math.abs(d)), `${dt} _distance ${got[i]._distance} vs ${d}`);
          }
        }
      });
    }

    test("k bounds: limit(2000) and limit(5000) on 2000 rows return all of them; limit(0) is a 400", async () => {
      const q = queries[0];
      for (const k of [2000, 5000]) {
        const got = await rowsOf(t.search(q).select(["id"]).limit(k));
        assert.equal(got.length, N, `k=${k}`);
        assert.equal(new Set(got.map((r) => r.id)).size, N);
        for (let i = 1; i < got.length; i++) assert.ok(got[i]._distance >= got[i - 1]._distance);
      }
      const withFilter = await rowsOf(t.search(q).where("cat = 7").select(["id"]).limit(5000));
      assert.equal(withFilter.length, N / 10);
      await rejects400(t.search(q).limit(0).toArray(), [/k|limit/i], "k=0");
    });

    test("explainPlan names the MemTable and SSTable sources", async () => {
      const plan = await t.search(queries[0]).limit(5).explainPlan();
      assert.equal(typeof plan, "string");
      assert.match(plan, /memtable/i);
      assert.match(plan, /sstable/i);
      const scan = await t.query().where("cat = 1").explainPlan(true);
      assert.match(scan, /memtable/i);
      assert.match(scan, /sstable/i);
    });

    test("analyzePlan runs the query and reports per source", async () => {
      const a = await t.search(queries[1]).where("cat = 2").limit(5).analyzePlan();
      assert.equal(typeof a, "string");
      assert.match(a, /memtable/i);
      assert.match(a, /sstable/i);
      assert.match(a, /\d/);
    });

    test("with a vector index: results stay exact; bypassVectorIndex is exact; explain tells index from scan", async () => {
      await t.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "l2" }) }).catch(failWithLog);
      await t.waitForIndex(["vector_idx"], 90).catch(failWithLog);
      for (const q of queries) {
        const exact = bruteForceTopK("l2", rows, q, 20).map((e) => e.id);
        const bypass = await rowsOf(t.search(q).bypassVectorIndex().select(["id"]).limit(20));
        assert.deepEqual(
          bypass.map((r) => r.id),
          exact,
        );
        const viaIndex = await rowsOf(t.search(q).select(["id"]).limit(20));
        const overlap = viaIndex.filter((r) => exact.includes(r.id)).length;
        assert.ok(overlap >= 18, `index recall ${overlap}/20`);
      }
      const withIndex = await t.search(queries[0]).limit(5).explainPlan();
      const exactPlan = await t.search(queries[0]).bypassVectorIndex().limit(5).explainPlan();
      assert.match(withIndex, /index|hnsw/i);
      assert.match(exactPlan, /exact|scan|flat|brute/i);
      assert.notEqual(withIndex, exactPlan);
    });
  });

  // ------------------------------------------------------------------------------------------
  // Bad queries.
  // ------------------------------------------------------------------------------------------
  describe("bad vector queries", () => {
    let t;
    before(async () => {
      const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false), vectorField("vector", 2)]);
      const rows = [
        { id: 1, vector: [1, 0] },
        { id: 2, vector: [0, 1] },
        { id: 3, vector: [0.5, 0.5] },
      ];
      t = await db.createTable("two", rows, { schema }).catch(failWithLog);
    });

    test("a query of dimension 1 on a 2-d table is a 400 naming 1 and 2", async () => {
      const msg = await rejects400(t.search([1]).toArray(), [/\b1\b/, /\b2\b/], "dimension 1");
      assert.match(msg, /dimension/i);
      await rejects400(t.search([1, 2, 3]).toArray(), [/\b3\b/, /\b2\b/], "dimension 3");
    });

    test("NaN in a query vector is refused", async () => {
      // The 0.31 client serializes NaN as JSON null (and may fail before sending); either way it must fail.
      await assert.rejects(t.search([NaN, 1]).toArray());
    });

    test("Inf (a JSON number beyond float32) in a query vector is a 400", async () => {
      const r = await post("two", "query/", { vector: [1e39, 0], k: 2, prefilter: true, version: null });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json?.error, "invalid_input", r.text);
    });

    test("a zero query vector under cosine is a 400; under l2 it works", async () => {
      await rejects400(t.search([0, 0]).distanceType("cosine").toArray(), [/zero|cosine/i], "zero cosine");
      const l2 = await rowsOf(t.search([0, 0]).limit(3).select(["id"]));
      assert.equal(l2.length, 3);
    });

    test("the table still answers after the bad queries", async () => {
      const got = await rowsOf(t.search([1, 0]).limit(1).select(["id"]));
      assert.equal(got[0].id, 1);
      assert.equal(await t.countRows(), 3);
    });
  });

  // ------------------------------------------------------------------------------------------
  // update/ and delete/.
  // ------------------------------------------------------------------------------------------
  test("update with array values sets vector and list columns (the client sends [a, b])", async () => {
    const v = await db
      .createTable("updvec", [
        { id: 1, vector: [1, 2], tags: ["a"] },
        { id: 2, vector: [5, 6], tags: ["b"] },
      ])
      .catch(failWithLog);
    await v.update({ where: "id = 1", values: { vector: [3, 4], tags: ["x", "y"] } });
    const rows = (await v.query().toArray())
      .map((r) => ({ id: Number(r.id), v: Array.from(r.vector), tags: r.tags.toArray() }))
      .sort((a, b) => a.id - b.id);
    assert.deepEqual(rows, [
      { id: 1, v: [3, 4], tags: ["x", "y"] },
      { id: 2, v: [5, 6], tags: ["b"] },
    ]);
    // The new vector is what a search finds.
    const hit = await rowsOf(v.search([3, 4]).limit(1).select(["id"]));
    assert.equal(Number(hit[0].id), 1);
    await rejects400(v.update({ where: "id = 1", values: { vector: [3, 4, 5] } }), [
      /dimension 2/,
      /3 elements/,
    ], "a 3-element array into a 2-d vector column");
  });

  describe("update and delete", () => {
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("n", new arrow.Int64(), true),
      new arrow.Field("name", new arrow.Utf8(), true),
      new arrow.Field("price", new arrow.Float64(), true),
    ]);
    const model = new Map(); // id -> row, the expected table
    for (let id = 1; id <= 20; id++) model.set(id, { id, n: id * 10, name: `r${id}`, price: id % 5 === 0 ? null : id });
    let t;

    const assertTable = async () => {
      const got = await rowsOf(t.query());
      got.sort((a, b) => a.id - b.id);
      assert.deepEqual(
        got,
        [...model.values()].sort((a, b) => a.id - b.id),
      );
    };

    before(async () => {
      t = await db.createTable("upd", [...model.values()], { schema: SCHEMA }).catch(failWithLog);
    });

    test("update with values (literal with a quote) on one row", async () => {
      const res = await t.update({ where: "id = 3", values: { name: "it's" } });
      assert.equal(res.rowsUpdated, 1);
      model.get(3).name = "it's";
      await assertTable();
    });

    test("update with valuesSql on a filtered set", async () => {
      const hit = [...model.values()].filter((r) => r.n >= 150 && r.price !== null);
      const res = await t.update({ where: "n >= 150 AND price IS NOT NULL", valuesSql: { n: "n + 1", price: "price * 2" } });
      assert.equal(res.rowsUpdated, hit.length);
      for (const r of hit) {
        r.n += 1;
        r.price *= 2;
      }
      await assertTable();
    });

    test("update after a flush reads the flushed version", async () => {
      await flush("upd");
      const res = await t.update({ where: "id IN (1, 2)", valuesSql: { n: "n * 3", name: "upper(name)" } });
      assert.equal(res.rowsUpdated, 2);
      for (const id of [1, 2]) {
        model.get(id).n *= 3;
        model.get(id).name = model.get(id).name.toUpperCase();
      }
      await assertTable();
    });

    test("update matching nothing changes nothing; a bad column is a 400 and changes nothing", async () => {
      const res = await t.update({ where: "id > 100", values: { name: "x" } });
      assert.equal(res.rowsUpdated, 0);
      await rejects400(t.update({ where: "id = 1", valuesSql: { n: "nosuch + 1" } }), [/nosuch/], "bad update expr");
      await rejects400(t.update({ where: "id = 1", values: { nosuch: 1 } }), [/nosuch/], "bad update column");
      await rejects400(t.update({ where: "nosuch = 1", values: { n: 1 } }), [/nosuch/], "bad update predicate");
      await assertTable();
    });

    test("delete with a complex filter leaves exactly the other rows", async () => {
      const pred = (r) => (r.id > 10 && r.id < 15) || ["r2", "r4"].includes(r.name) || r.price === null;
      const gone = [...model.values()].filter(pred);
      const res = await t.delete("(id > 10 AND id < 15) OR name IN ('r2', 'r4') OR price IS NULL");
      if (res && res.numDeletedRows !== undefined) assert.equal(res.numDeletedRows, gone.length);
      for (const r of gone) model.delete(r.id);
      await assertTable();
      assert.equal(await t.countRows(), model.size);
      const none = await t.delete("id = 999");
      if (none && none.numDeletedRows !== undefined) assert.equal(none.numDeletedRows, 0);
      await rejects400(t.delete("nosuch > 1"), [/nosuch/], "bad delete predicate");
      await assertTable();
    });

    test("4 concurrent clients each increment n 25 times: no lost update", async () => {
      const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false), new arrow.Field("n", new arrow.Int64(), true)]);
      await db.createTable("ctr", [{ id: 1, n: 0 }, { id: 2, n: 0 }], { schema }).catch(failWithLog);
      const workers = await Promise.all([0, 1, 2, 3].map(async () => (await connect()).openTable("ctr")));
      await Promise.all(
        workers.map(async (w) => {
          for (let i = 0; i < 25; i++) {
            const r = await w.update({ where: "id = 1", valuesSql: { n: "n + 1" } });
            assert.equal(r.rowsUpdated, 1);
          }
        }),
      );
      const ctr = await db.openTable("ctr");
      const got = (await rowsOf(ctr.query())).sort((a, b) => a.id - b.id);
      assert.deepEqual(got, [
        { id: 1, n: 100 },
        { id: 2, n: 0 },
      ]);
    });
  });

  // ------------------------------------------------------------------------------------------
  // merge_insert/.
  // ------------------------------------------------------------------------------------------
  describe("mergeInsert", () => {
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("name", new arrow.Utf8(), true),
      new arrow.Field("price", new arrow.Float64(), true),
    ]);
    const model = new Map();
    for (let id = 1; id <= 6; id++) model.set(id, { id, name: `m${id}`, price: id * 10 });
    let t;

    const assertTable = async () => {
      const got = (await rowsOf(t.query())).sort((a, b) => a.id - b.id);
      assert.deepEqual(
        got,
        [...model.values()].sort((a, b) => a.id - b.id),
      );
    };
    const assertCounts = (res, { inserted, updated, deleted }) => {
      assert.equal(res.numInsertedRows, inserted, "numInsertedRows");
      assert.equal(res.numUpdatedRows, updated, "numUpdatedRows");
      assert.equal(res.numDeletedRows, deleted, "numDeletedRows");
    };
    const source = (list) => lancedb.makeArrowTable(list, { schema: SCHEMA });

    before(async () => {
      t = await db.createTable("mi", [...model.values()], { schema: SCHEMA }).catch(failWithLog);
    });

    test("upsert: whenMatchedUpdateAll + whenNotMatchedInsertAll", async () => {
      const src = [
        { id: 5, name: "five'", price: 55 },
        { id: 6, name: "six", price: 66 },
        { id: 7, name: "seven", price: 70 },
        { id: 8, name: "eight", price: null },
      ];
      const res = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(source(src));
      assertCounts(res, { inserted: 2, updated: 2, deleted: 0 });
      for (const r of src) model.set(r.id, { ...r });
      await assertTable();
    });

    test("insert-only: whenNotMatchedInsertAll leaves matched rows alone", async () => {
      await flush("mi"); // the matched rows now sit in an SSTable
      const src = [
        { id: 1, name: "NEW", price: 1 },
        { id: 9, name: "nine", price: 90 },
      ];
      const res = await t.mergeInsert("id").whenNotMatchedInsertAll().execute(source(src));
      assertCounts(res, { inserted: 1, updated: 0, deleted: 0 });
      model.set(9, { ...src[1] });
      await assertTable();
    });

    test("conditional update: whenMatchedUpdateAll({where: 'target.price < source.price'})", async () => {
      const src = [
        { id: 1, name: "one-up", price: 11 }, // 10 < 11: updated
        { id: 2, name: "two-down", price: 5 }, // 20 < 5 is false: kept
        { id: 10, name: "ten", price: 100 }, // not matched, no insert clause: ignored
      ];
      const res = await t.mergeInsert("id").whenMatchedUpdateAll({ where: "target.price < source.price" }).execute(source(src));
      assertCounts(res, { inserted: 0, updated: 1, deleted: 0 });
      model.set(1, { ...src[0] });
      await assertTable();
    });

    test("whenNotMatchedBySourceDelete({where}) deletes only unmatched target rows passing it", async () => {
      const src = [
        { id: 2, name: "two", price: 20 },
        { id: 3, name: "three", price: 30 },
      ];
      const gone = [...model.values()].filter((r) => r.id > 6 && ![2, 3].includes(r.id)).map((r) => r.id);
      const res = await t
        .mergeInsert("id")
        .whenMatchedUpdateAll()
        .whenNotMatchedBySourceDelete({ where: "id > 6" })
        .execute(source(src));
      assertCounts(res, { inserted: 0, updated: 2, deleted: gone.length });
      for (const r of src) model.set(r.id, { ...r });
      for (const id of gone) model.delete(id);
      await assertTable();
    });

    test("full sync: update + insert + whenNotMatchedBySourceDelete makes the table equal the source", async () => {
      const src = [
        { id: 2, name: "TWO", price: 2 },
        { id: 3, name: "THREE", price: 3 },
        { id: 11, name: "eleven", price: 11 },
      ];
      const before = new Set(model.keys());
      const res = await t
        .mergeInsert("id")
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .whenNotMatchedBySourceDelete()
        .execute(source(src));
      assertCounts(res, { inserted: 1, updated: 2, deleted: before.size - 2 });
      model.clear();
      for (const r of src) model.set(r.id, { ...r });
      await assertTable();
    });

    test("merge on a column that is not in the table is a 400 and changes nothing", async () => {
      await assert.rejects(
        t.mergeInsert("nosuch").whenNotMatchedInsertAll().execute(source([{ id: 50, name: "x", price: 1 }])),
        /nosuch/,
      );
      await assertTable();
    });
  });

  // ------------------------------------------------------------------------------------------
  // Hybrid search (vector + FTS fused by the client with RRF over `_rowid`).
  // ------------------------------------------------------------------------------------------
  describe("hybrid search", () => {
    const DIM = 4;
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("text", new arrow.Utf8(), true),
      vectorField("vector", DIM),
    ]);
    const FILL = ["alpha", "bravo", "charlie", "delta", "golf", "hotel", "kilo", "lima", "oscar", "quebec"];
    // "zebra" documents, BM25 order 50 > 10 > 90 > 130 (tf 2 in the shortest text first, then
    // tf 1 in texts of growing length).
    const ZEBRA = {
      50: "zebra zebra",
      10: "zebra alpha",
      90: "zebra alpha bravo charlie",
      130: "zebra alpha bravo charlie delta golf hotel kilo",
    };
    const ZEBRA_ORDER = [50, 10, 90, 130];
    const rand = rng(2718);
    const rows = Array.from({ length: 200 }, (_, id) => {
      const words = Array.from({ length: 3 + (id % 4) }, () => FILL[Math.floor(rand() * FILL.length)]);
      return { id, text: ZEBRA[id] ?? words.join(" "), vector: randomVector(rand, DIM) };
    });
    let t;

    before(async () => {
      t = await db.createTable("hy", rows, { schema: SCHEMA }).catch(failWithLog);
      await t.createIndex("text", { config: lancedb.Index.fts() }).catch(failWithLog);
      await t.waitForIndex(["text_idx"], 60).catch(failWithLog);
    });

    test("FTS alone ranks the zebra documents by BM25 and returns _score", async () => {
      const got = await rowsOf(t.search("zebra", "fts").select(["id"]).limit(10));
      assert.deepEqual(
        got.map((r) => r.id),
        ZEBRA_ORDER,
      );
      for (let i = 1; i < got.length; i++) assert.ok(got[i]._score < got[i - 1]._score);
      const withRowId = await t.search("zebra", "fts").select(["id"]).withRowId().limit(10).toArray();
      for (const r of withRowId) assert.equal(typeof r._rowid, "bigint");
    });

    test("nearestTo(v).fullTextSearch(q) fuses both lists (RRF) with _relevance_score", async () => {
      const q = rows[50].vector; // id 50 is first in both lists
      const K = 5;
      const got = await t.query().nearestTo(q).fullTextSearch("zebra").select(["id", "text"]).limit(K).toArray().catch(failWithLog);
      const res = got.map(plain);
      assert.equal(res.length, K);
      assert.ok("_relevance_score" in res[0], `columns ${Object.keys(res[0])}`);
      assert.equal(res[0].id, 50);
      for (let i = 1; i < res.length; i++) assert.ok(res[i]._relevance_score <= res[i - 1]._relevance_score);
      // Expected: RRF (k = 60) over the exact vector top-K and the FTS order.
      const vec = bruteForceTopK("l2", rows, q, K).map((e) => e.id);
      const score = new Map();
      vec.forEach((id, i) => score.set(id, (score.get(id) ?? 0) + 1 / (60 + i + 1)));
      ZEBRA_ORDER.slice(0, K).forEach((id, i) => score.set(id, (score.get(id) ?? 0) + 1 / (60 + i + 1)));
      const ranked = [...score.entries()].sort((a, b) => b[1] - a[1]);
      // The K-th and (K+1)-th fused scores must differ for the expected set to be well defined.
      assert.ok(ranked.length <= K || ranked[K - 1][1] !== ranked[K][1], "test data has a tie at rank K");
      const want = ranked.slice(0, K).map(([id]) => id);
      assert.deepEqual(ids(res), [...want].sort((a, b) => a - b));
      for (const r of res) assert.equal(r.text, rows[r.id].text);
    });

    test("hybrid search with a filter applies it to both lists", async () => {
      const q = rows[50].vector;
      const res = (
        await t.query().nearestTo(q).fullTextSearch("zebra").where("id <> 50 AND id < 100").select(["id"]).limit(4).toArray()
      ).map(plain);
      assert.ok(res.length > 0);
      for (const r of res) assert.ok(r.id !== 50 && r.id < 100, `id ${r.id} fails the filter`);
      // Both remaining zebra rows under 100 rank high in the FTS list, so they are in the top 4.
      const got = new Set(res.map((r) => r.id));
      assert.ok(got.has(10) && got.has(90), `ids ${[...got]}`);
    });
  });

  // ------------------------------------------------------------------------------------------
  // explain_plan/ and analyze_plan/ across tiers and with a scalar index.
  // ------------------------------------------------------------------------------------------
  describe("explain and analyze", () => {
    const SCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("tag", new arrow.Utf8(), true),
      vectorField("vector", 2),
    ]);
    const rand = rng(5);
    const mk = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, tag: `t${(from + i) % 3}`, vector: randomVector(rand, 2) }));
    let t;

    before(async () => {
      t = await db.createTable("ex", mk(0, 50), { schema: SCHEMA }).catch(failWithLog);
    });

    test("only a MemTable before the flush; an SSTable after it; both after another write", async () => {
      const p1 = await t.query().where("tag = 't1'").explainPlan();
      assert.match(p1, /memtable/i);
      await flush("ex");
      const p2 = await t.query().where("tag = 't1'").explainPlan();
      assert.match(p2, /sstable/i);
      assert.notEqual(p2, p1, "the plan must change when the rows move to an SSTable");
      await t.add(mk(50, 10));
      const p3 = await t.search([0.1, 0.2]).where("tag = 't1'").limit(3).explainPlan();
      assert.match(p3, /sstable/i);
      assert.match(p3, /memtable/i);
    });

    test("a BTree index on the filter column shows in the plan; a filter on another column is a scan", async () => {
      await t.createIndex("id", { config: lancedb.Index.btree() }).catch(failWithLog);
      await t.waitForIndex(["id_idx"], 60).catch(failWithLog);
      const indexed = await t.query().where("id = 55").explainPlan(true);
      const scanned = await t.query().where("tag = 't2'").explainPlan(true);
      assert.match(indexed, /btree|index/i);
      assert.notEqual(indexed, scanned);
      assert.match(scanned, /scan|exact|full/i);
      // The answers stay right.
      assert.deepEqual(ids(await rowsOf(t.query().where("id = 55").select(["id"]))), [55]);
      assert.equal(await t.countRows("tag = 't2'"), 20);
    });

    test("analyzePlan reports the rows each source produced", async () => {
      const a = await t.query().where("tag = 't0'").analyzePlan();
      assert.equal(typeof a, "string");
      assert.match(a, /memtable/i);
      assert.match(a, /sstable/i);
      assert.match(a, /\b20\b|\b17\b|\b3\b/); // 20 matching rows: 17 in the SSTable, 3 in the MemTable
    });
  });
});
