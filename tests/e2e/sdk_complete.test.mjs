// End-to-end: one walk through the LanceDB SDK README surface with the real Node client
// (@lancedb/lancedb 0.31.0, remote mode) against `strata serve` (issue 6, section Tests).
// lancedb.test.mjs, indexes.test.mjs and query_engine.test.mjs test most of these calls in
// depth; this file checks each one briefly, with values, so that one file shows the whole SDK
// list working: tableNames paging, the create modes, openTable errors, add, countRows, every
// search option, FTS, hybrid search with the RRF reranker, mergeInsert, update, delete, the
// four index kinds, dropTable, percent-encoded and namespaced names, and database isolation.
// Every expected value is computed here from the rows this file generated (lib/vectors.mjs
// gives exact nearest neighbours by brute force).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { plain, rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";
import { bruteForceTopK, distance, randomVector, rng } from "./lib/vectors.mjs";

const DIM = 8;
const N = 300;
const TOL = 1e-4;
const WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "ember"];

const vectorField = (name, dim) =>
  new arrow.Field(name, new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), true);

const SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("label", new arrow.Int32(), true),
  new arrow.Field("text", new arrow.Utf8(), true),
  vectorField("vector", DIM),
]);

/** Rows id0..id0+n-1: label = id % 7, text = two words chosen by id, a random vector. */
function makeRows(rand, id0, n) {
  return Array.from({ length: n }, (_, i) => {
    const id = id0 + i;
    return {
      id,
      label: id % 7,
      text: `${WORDS[id % WORDS.length]} ${WORDS[Math.floor(id / WORDS.length) % WORDS.length]}`,
      vector: randomVector(rand, DIM),
    };
  });
}

const sortedIds = (rows) => rows.map((r) => r.id).sort((a, b) => a - b);

describe("the LanceDB SDK surface against strata serve", () => {
  let server;
  let db;
  const rand = rng(60606);
  const rows = makeRows(rand, 0, N);
  const byId = new Map(rows.map((r) => [r.id, r]));
  let items; // table "items" in database "sdk"

  const connect = (name = "sdk") => lancedb.connect(`db://${name}`, { apiKey: "k", hostOverride: server.url });
  const failWithLog = (e) => {
    e.message += `\n${server.logTail(3000)}`;
    throw e;
  };
  /** Exact top-k of `q` over the rows passing `pred`, as [{id, distance}]. */
  const exact = (dt, q, k, pred = () => true) => bruteForceTopK(dt, [...byId.values()].filter(pred), q, k);

  before(async () => {
    server = await startServer();
    db = await connect();
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  describe("tables", () => {
    test("tableNames pages with startAfter and limit (sorted, start exclusive)", async () => {
      const pdb = await connect("paging");
      assert.deepEqual(await pdb.tableNames(), []);
      const names = ["t_e", "t_a", "t_c", "t_b", "t_d"];
      for (const n of names) {
        await pdb.createEmptyTable(n, new arrow.Schema([new arrow.Field("x", new arrow.Int32(), true)])).catch(failWithLog);
      }
      assert.deepEqual(await pdb.tableNames(), ["t_a", "t_b", "t_c", "t_d", "t_e"]);
      assert.deepEqual(await pdb.tableNames({ limit: 2 }), ["t_a", "t_b"]);
      assert.deepEqual(await pdb.tableNames({ startAfter: "t_b", limit: 2 }), ["t_c", "t_d"]);
      assert.deepEqual(await pdb.tableNames({ startAfter: "t_c" }), ["t_d", "t_e"]);
      assert.deepEqual(await pdb.tableNames({ startAfter: "t_bb" }), ["t_c", "t_d", "t_e"]);
      assert.deepEqual(await pdb.tableNames({ startAfter: "t_e" }), []);
      // Walk every page of 2.
      const seen = [];
      let after;
      for (;;) {
        const page = await pdb.tableNames(after === undefined ? { limit: 2 } : { startAfter: after, limit: 2 });
        if (page.length === 0) break;
        assert.ok(page.length <= 2);
        seen.push(...page);
        after = page[page.length - 1];
      }
      assert.deepEqual(seen, ["t_a", "t_b", "t_c", "t_d", "t_e"]);
    });

    test("createTable from rows with a schema; countRows with and without a filter", async () => {
      items = await db.createTable("items", rows, { schema: SCHEMA }).catch(failWithLog);
      assert.equal(await items.countRows(), N);
      assert.equal(await items.countRows("label = 3"), rows.filter((r) => r.label === 3).length);
      assert.equal(await items.countRows("id >= 100 AND text LIKE 'apple%'"),
        rows.filter((r) => r.id >= 100 && r.text.startsWith("apple")).length);
      assert.deepEqual(await db.tableNames(), ["items"]);
    });

    test("createEmptyTable: schema only, zero rows, then add", async () => {
      const schema = new arrow.Schema([new arrow.Field("k", new arrow.Utf8(), true), vectorField("v", 2)]);
      const t = await db.createEmptyTable("empty", schema).catch(failWithLog);
      assert.equal(await t.countRows(), 0);
      assert.deepEqual(
        (await t.schema()).fields.map((f) => `${f.name}:${f.type}`),
        ["k:Utf8", "v:FixedSizeList[2]<Float32>"],
      );
      await t.add([{ k: "a", v: [1, 2] }]);
      assert.deepEqual(await rowsOf(t.query()), [{ k: "a", v: [1, 2] }]);
    });

    test("mode create on an existing table is the SDK's 'already exists' error and changes nothing", async () => {
      const extra = makeRows(rng(1), 1000, 3);
      await assert.rejects(db.createTable("items", extra, { schema: SCHEMA }), /Table 'items' already exists/);
      await assert.rejects(
        db.createTable("items", extra, { schema: SCHEMA, mode: "create" }),
        /Table 'items' already exists/,
      );
      assert.equal(await items.countRows(), N);
    });

    test("existOk opens the existing table; overwrite replaces schema and data", async () => {
      const same = await db.createTable("items", makeRows(rng(2), 2000, 2), { schema: SCHEMA, existOk: true });
      assert.equal(await same.countRows(), N);
      assert.equal(await same.countRows("id >= 2000"), 0);
      const t = await db.createTable("empty", [{ z: 1.5 }, { z: 2.5 }], { mode: "overwrite" }).catch(failWithLog);
      assert.deepEqual((await t.schema()).fields.map((f) => f.name), ["z"]);
      assert.deepEqual((await rowsOf(t.query())).map((r) => r.z).sort(), [1.5, 2.5]);
      const reopened = await db.openTable("empty");
      assert.equal(await reopened.countRows("z > 2"), 1);
    });

    test("openTable of a missing table is the SDK's 'not found' error", async () => {
      await assert.rejects(db.openTable("no_such"), /Table 'no_such' was not found/);
    });

    test("dropTable removes a table; the name can be created again", async () => {
      await db.dropTable("empty");
      assert.deepEqual(await db.tableNames(), ["items"]);
      await assert.rejects(db.openTable("empty"), /Table 'empty' was not found/);
      const t = await db.createTable("empty", [{ q: "x" }]);
      assert.equal(await t.countRows(), 1);
      await db.dropTable("empty");
      assert.deepEqual(await db.tableNames(), ["items"]);
    });

    test("percent-encoded names: 'my table' and 'tä' round-trip", async () => {
      const a = await db.createTable("my table", [{ n: 1 }, { n: 2 }]).catch(failWithLog);
      const b = await db.createTable("tä", [{ n: 3 }]).catch(failWithLog);
      assert.equal(await a.countRows(), 2);
      assert.equal(await b.countRows(), 1);
      assert.deepEqual(await db.tableNames(), ["items", "my table", "tä"]);
      const a2 = await db.openTable("my table");
      await a2.add([{ n: 4 }]);
      assert.deepEqual((await rowsOf(a2.query())).map((r) => r.n).sort(), [1, 2, 4]);
      assert.deepEqual(await rowsOf((await db.openTable("tä")).query()), [{ n: 3 }]);
      await db.dropTable("my table");
      await db.dropTable("tä");
      assert.deepEqual(await db.tableNames(), ["items"]);
    });

    test("namespaced names: createTable(name, data, [ns]) is the table 'ns$name'", async () => {
      const t = await db.createTable("inner", [{ n: 7 }, { n: 8 }], ["ns1"]).catch(failWithLog);
      assert.equal(await t.countRows(), 2);
      const again = await db.openTable("inner", ["ns1"]);
      assert.equal(await again.countRows("n = 8"), 1);
      // The root listing shows the '$'-joined id; the unqualified name is another table.
      assert.ok((await db.tableNames()).includes("ns1$inner"), `${await db.tableNames()}`);
      await assert.rejects(db.openTable("inner"), /Table 'inner' was not found/);
      const same = await db.openTable("ns1$inner");
      assert.equal(await same.countRows(), 2);
      await db.dropTable("inner", ["ns1"]);
      assert.deepEqual(await db.tableNames(), ["items"]);
    });

    test("x-lancedb-database isolates databases: db://a and db://b see different tables", async () => {
      const a = await connect("iso_a");
      const b = await connect("iso_b");
      await a.createTable("shared", [{ v: 1 }, { v: 2 }]);
      assert.deepEqual(await a.tableNames(), ["shared"]);
      assert.deepEqual(await b.tableNames(), []);
      await assert.rejects(b.openTable("shared"), /Table 'shared' was not found/);
      await b.createTable("shared", [{ v: 10 }]);
      assert.deepEqual((await rowsOf((await a.openTable("shared")).query())).map((r) => r.v).sort(), [1, 2]);
      assert.deepEqual(await rowsOf((await b.openTable("shared")).query()), [{ v: 10 }]);
      await b.dropTable("shared");
      assert.equal(await (await a.openTable("shared")).countRows(), 2, "dropping b's table leaves a's");
      assert.deepEqual(await db.tableNames(), ["items"], "the sdk database sees neither");
    });
  });

  describe("add and search", () => {
    test("add appends rows visible at once", async () => {
      const more = makeRows(rand, N, 40);
      await items.add(more);
      for (const r of more) byId.set(r.id, r);
      assert.equal(await items.countRows(), N + 40);
      assert.equal(await items.countRows(`id >= ${N}`), 40);
    });

    test("search with where and a select list: exact prefiltered top-k, only those columns", async () => {
      const q = randomVector(rng(11), DIM);
      const res = await rowsOf(items.search(q).where("label IN (1, 2)").select(["id", "label"]).limit(7));
      assert.deepEqual(
        res.map((r) => r.id),
        exact("l2", q, 7, (r) => r.label === 1 || r.label === 2).map((e) => e.id),
      );
      for (const r of res) {
        assert.deepEqual(Object.keys(r).sort(), ["_distance", "id", "label"]);
        assert.equal(r.label, byId.get(r.id).label);
        assert.ok(Math.abs(r._distance - distance("l2", q, byId.get(r.id).vector)) < TOL);
      }
    });

    test("select with an alias map computes SQL expressions", async () => {
      const res = await rowsOf(
        items.query().where("id < 5").select({ ident: "id", twice: "id * 2", lab: "label + 100" }),
      );
      assert.deepEqual(
        res.sort((a, b) => a.ident - b.ident),
        [0, 1, 2, 3, 4].map((id) => ({ ident: id, twice: id * 2, lab: (id % 7) + 100 })),
      );
    });

    test("limit and offset on a vector search return ranks offset..offset+limit", async () => {
      const q = randomVector(rng(12), DIM);
      const res = await rowsOf(items.search(q).select(["id"]).limit(5).offset(3));
      assert.deepEqual(
        res.map((r) => r.id),
        exact("l2", q, 8).slice(3).map((e) => e.id),
      );
    });

    test("withRowId adds unique uint64 _rowid values", async () => {
      const q = randomVector(rng(13), DIM);
      const res = await items.search(q).select(["id"]).withRowId().limit(20).toArray();
      assert.equal(res.length, 20);
      const rowids = res.map((r) => r._rowid);
      for (const r of rowids) assert.equal(typeof r, "bigint");
      assert.equal(new Set(rowids).size, 20);
      // takeRowIds returns the same rows.
      const taken = await rowsOf(items.takeRowIds(rowids.slice(0, 3)).select(["id"]));
      assert.deepEqual(sortedIds(taken), sortedIds(res.slice(0, 3).map(plain)));
    });

    for (const dt of ["cosine", "dot"]) {
      test(`distanceType ${dt}: exact order and _distance`, async () => {
        const q = randomVector(rng(dt.length), DIM);
        const res = await rowsOf(items.search(q).distanceType(dt).select(["id"]).limit(6));
        const want = exact(dt, q, 6);
        assert.deepEqual(res.map((r) => r.id), want.map((e) => e.id));
        res.forEach((r, i) => assert.ok(Math.abs(r._distance - want[i].distance) < TOL * Math.max(1, Math.abs(want[i].distance))));
      });
    }

    test("postfilter filters the unfiltered top-k", async () => {
      const q = randomVector(rng(14), DIM);
      const k = 20;
      const res = await rowsOf(items.search(q).where("label = 0").postfilter().select(["id"]).limit(k));
      const want = exact("l2", q, k).filter((e) => byId.get(e.id).label === 0).map((e) => e.id);
      assert.deepEqual(res.map((r) => r.id), want);
      assert.ok(want.length < k, "the postfilter drops rows");
    });

    test("distanceRange(lower, upper) keeps exactly the rows with lower <= d < upper", async () => {
      const q = randomVector(rng(15), DIM);
      const all = exact("l2", q, byId.size);
      const lo = all[10].distance;
      const hi = all[25].distance;
      const res = await rowsOf(items.search(q).distanceRange(lo, hi).select(["id"]).limit(1000));
      assert.deepEqual(res.map((r) => r.id), all.slice(10, 25).map((e) => e.id));
      for (const r of res) assert.ok(r._distance >= lo - TOL && r._distance < hi);
    });
  });

  describe("indexes", () => {
    test("createIndex IVF_PQ, IVF_HNSW_SQ, BTREE, FTS; listIndices; waitForIndex; indexStats", async () => {
      await items.createIndex("vector", {
        config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }),
      }).catch(failWithLog);
      await items.createIndex("vector", {
        config: lancedb.Index.hnswSq({ distanceType: "cosine" }),
        name: "vec_hnsw",
      }).catch(failWithLog);
      await items.createIndex("label", { config: lancedb.Index.btree() }).catch(failWithLog);
      await items.createIndex("text", { config: lancedb.Index.fts() }).catch(failWithLog);
      const names = ["label_idx", "text_idx", "vec_hnsw", "vector_idx"];
      await items.waitForIndex(names, 60).catch(failWithLog);
      const list = await items.listIndices();
      assert.deepEqual(list.map((i) => i.name).sort(), names);
      const byName = new Map(list.map((i) => [i.name, i]));
      assert.deepEqual(byName.get("vector_idx").columns, ["vector"]);
      assert.deepEqual(byName.get("vec_hnsw").columns, ["vector"]);
      assert.deepEqual(byName.get("label_idx").columns, ["label"]);
      assert.deepEqual(byName.get("text_idx").columns, ["text"]);
      const total = await items.countRows();
      for (const n of names) {
        const s = await items.indexStats(n);
        assert.equal(s.numIndexedRows, total, `${n} numIndexedRows`);
        assert.equal(s.numUnindexedRows, 0, `${n} numUnindexedRows`);
      }
      assert.match((await items.indexStats("vector_idx")).indexType, /^(IVF_PQ|IvfPq)$/);
      assert.match((await items.indexStats("vec_hnsw")).indexType, /^(IVF_HNSW_SQ|IvfHnswSq)$/);
      assert.match((await items.indexStats("label_idx")).indexType, /^(BTREE|BTree)$/);
      assert.match((await items.indexStats("text_idx")).indexType, /^(FTS|INVERTED|Inverted)$/);
      assert.equal((await items.indexStats("vec_hnsw")).distanceType, "cosine");
      assert.equal(await items.indexStats("missing_idx"), undefined);
    });

    test("bypassVectorIndex is exact; the indexed search agrees on the nearest row", async () => {
      for (let i = 0; i < 3; i++) {
        const q = randomVector(rng(100 + i), DIM);
        const flat = await rowsOf(items.search(q).bypassVectorIndex().select(["id"]).limit(10));
        assert.deepEqual(flat.map((r) => r.id), exact("l2", q, 10).map((e) => e.id));
      }
      // A stored vector finds itself through the index.
      const self = byId.get(77);
      const hit = await rowsOf(items.search(self.vector).select(["id"]).limit(1));
      assert.equal(hit[0].id, 77);
    });

    test("FTS after createIndex(Index.fts()) finds exactly the rows with the word, with _score", async () => {
      const want = sortedIds([...byId.values()].filter((r) => r.text.split(" ").includes("tiger")));
      const res = await rowsOf(items.search("tiger", "fts").select(["id", "text"]).limit(1000));
      assert.deepEqual(sortedIds(res), want);
      for (const r of res) {
        assert.equal(r.text, byId.get(r.id).text);
        assert.ok(r._score > 0);
      }
      for (let i = 1; i < res.length; i++) assert.ok(res[i]._score <= res[i - 1]._score);
    });

    test("hybrid search: vector + FTS fused by the RRF reranker", async () => {
      const target = byId.get(123); // its text starts with WORDS[123 % 8] = "cloud"
      const word = target.text.split(" ")[0];
      const reranker = await lancedb.rerankers.RRFReranker.create();
      const res = (
        await items.query().nearestTo(target.vector).fullTextSearch(word).rerank(reranker).select(["id", "text"]).limit(5).toArray()
      ).map(plain);
      assert.equal(res.length, 5);
      assert.ok("_relevance_score" in res[0], `columns ${Object.keys(res[0])}`);
      // Row 123 is the nearest vector (distance 0) and matches the word, so RRF ranks it first.
      assert.equal(res[0].id, 123);
      for (let i = 1; i < res.length; i++) assert.ok(res[i]._relevance_score <= res[i - 1]._relevance_score);
      for (const r of res) assert.equal(r.text, byId.get(r.id).text);
    });
  });

  describe("writes", () => {
    const MSCHEMA = new arrow.Schema([
      new arrow.Field("id", new arrow.Int64(), false),
      new arrow.Field("name", new arrow.Utf8(), true),
      new arrow.Field("n", new arrow.Int64(), true),
    ]);
    const model = new Map();
    let t;
    const src = (list) => lancedb.makeArrowTable(list, { schema: MSCHEMA });
    const assertModel = async () => {
      const got = (await rowsOf(t.query())).sort((a, b) => a.id - b.id);
      assert.deepEqual(got, [...model.values()].sort((a, b) => a.id - b.id));
    };

    before(async () => {
      for (let id = 1; id <= 5; id++) model.set(id, { id, name: `r${id}`, n: id });
      t = await db.createTable("writes", [...model.values()], { schema: MSCHEMA }).catch(failWithLog);
    });

    test("mergeInsert upsert: matched rows updated, new rows inserted", async () => {
      const s = [
        { id: 4, name: "four", n: 40 },
        { id: 6, name: "six", n: 60 },
      ];
      const r = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(src(s));
      assert.equal(r.numUpdatedRows, 1);
      assert.equal(r.numInsertedRows, 1);
      assert.equal(r.numDeletedRows, 0);
      for (const x of s) model.set(x.id, x);
      await assertModel();
    });

    test("mergeInsert insert-only leaves matched rows alone", async () => {
      const s = [
        { id: 1, name: "CHANGED", n: -1 },
        { id: 7, name: "seven", n: 70 },
      ];
      const r = await t.mergeInsert("id").whenNotMatchedInsertAll().execute(src(s));
      assert.equal(r.numInsertedRows, 1);
      assert.equal(r.numUpdatedRows, 0);
      model.set(7, s[1]);
      await assertModel();
    });

    test("mergeInsert whenNotMatchedBySourceDelete removes target rows absent from the source", async () => {
      const s = [
        { id: 2, name: "two", n: 2 },
        { id: 3, name: "three", n: 3 },
      ];
      const r = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedBySourceDelete().execute(src(s));
      assert.equal(r.numUpdatedRows, 2);
      assert.equal(r.numDeletedRows, model.size - 2);
      model.clear();
      for (const x of s) model.set(x.id, x);
      for (let id = 10; id < 20; id++) model.set(id, { id, name: `x${id}`, n: id });
      await t.add([...model.values()].filter((x) => x.id >= 10));
      await assertModel();
    });

    test("update with values (a literal with a quote) and with valuesSql", async () => {
      const r1 = await t.update({ values: { name: "it's" }, where: "id = 2" });
      assert.equal(r1.rowsUpdated, 1);
      model.get(2).name = "it's";
      const r2 = await t.update({ valuesSql: { n: "n * 10 + 1" }, where: "id >= 15" });
      assert.equal(r2.rowsUpdated, 5);
      for (let id = 15; id < 20; id++) model.get(id).n = id * 10 + 1;
      await assertModel();
      assert.ok(r2.version > r1.version, "each write returns a newer version");
    });

    test("delete removes exactly the matching rows", async () => {
      await t.delete("n % 2 = 1 AND id > 10");
      for (const [id, x] of [...model]) if (x.n % 2 === 1 && id > 10) model.delete(id);
      await assertModel();
      assert.equal(await t.countRows(), model.size);
    });
  });
});
