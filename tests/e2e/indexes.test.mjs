// End-to-end: the index routes of PROTOCOL.md §5.4 (create_index/, index/list/,
// index/{n}/stats/, index/{n}/drop/, index/{n}/prewarm/) and mem_wal/describe/'s `indexes`, with
// the real LanceDB Node client (@lancedb/lancedb 0.31.0) against `strata serve`.
// Indexes are created on a table that already holds rows (so the server indexes them in the
// background and waitForIndex must see num_unindexed_rows fall to 0). Expected values are
// computed here: nearest neighbours by brute force (lib/vectors.mjs) and full-text matches by
// tokenizing the generated texts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { plain, rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";
import { bruteForceTopK, randomVector, rng } from "./lib/vectors.mjs";

const DIM = 8;
const N0 = 300; // rows written before any index exists
const N1 = 60; // rows written after the indexes exist
const DB = "idx";

const vectorField = (name) =>
  new arrow.Field(name, new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true);

const SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("text", new arrow.Utf8(), true),
  vectorField("vector"),
  vectorField("emb"),
]);

// Words that are not English stop words and that the Snowball stemmer maps to distinct stems.
const WORDS = ["alpha", "bravo", "charlie", "delta", "golf", "hotel", "kilo", "lima", "oscar", "quebec"];

// Row `id`'s text: 3-6 random words; every 17th row also holds "zebra" (rows after the index:
// the plural "Zebras", which lower-casing and stemming must reduce to "zebra").
function makeRows(rand, firstId, n, { late = false } = {}) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const id = firstId + i;
    const words = [];
    const nw = 3 + Math.floor(rand() * 4);
    for (let w = 0; w < nw; w++) words.push(WORDS[Math.floor(rand() * WORDS.length)]);
    if (id % 17 === 0) words.splice(Math.floor(rand() * words.length), 0, late ? "Zebras" : "zebra");
    rows.push({ id, text: words.join(" "), vector: randomVector(rand, DIM), emb: randomVector(rand, DIM) });
  }
  return rows;
}


// Ids of rows whose text contains the word (case-insensitive; "Zebras" counts as "zebra").
function idsWithWord(rows, word) {
  return rows
    .filter((r) =>
      r.text
        .toLowerCase()
        .split(/[^a-z]+/)
        .some((t) => t === word || t === word + "s"),
    )
    .map((r) => r.id)
    .sort((a, b) => a - b);
}

describe("indexes with the LanceDB client against strata serve", () => {
  let server;
  let db;
  let table;
  const rand = rng(4242);
  const rows = makeRows(rand, 0, N0);
  const queries = Array.from({ length: 6 }, () => randomVector(rand, DIM));
  let top1Before; // {vector: [...ids], emb: [...ids]} from the server before any index

  const failWithLog = (e) => {
    e.message += `\n${server.logTail(3000)}`;
    throw e;
  };

  // POST a Strata extension route with fetch (PROTOCOL.md §0).
  async function post(route, body) {
    const res = await fetch(`${server.url}/v1/table/docs/${route}`, {
      method: "POST",
      headers: { "x-lancedb-database": DB, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  async function top1(column, distanceType) {
    const out = [];
    for (const q of queries) {
      const r = await rowsOf(table.search(q).column(column).distanceType(distanceType).limit(1).select(["id"]));
      out.push(r[0].id);
    }
    return out;
  }

  before(async () => {
    server = await startServer();
    db = await lancedb.connect(`db://${DB}`, { apiKey: "x", hostOverride: server.url });
    table = await db.createTable("docs", rows, { schema: SCHEMA }).catch(failWithLog);
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  test("a table without indexes lists none and searches exactly", async () => {
    assert.deepEqual(await table.listIndices(), []);
    assert.equal(await table.indexStats("vector_idx"), undefined);
    top1Before = { vector: await top1("vector", "l2"), emb: await top1("emb", "cosine") };
    assert.deepEqual(
      top1Before.vector,
      queries.map((q) => bruteForceTopK("l2", rows, q, 1)[0].id),
    );
    assert.deepEqual(
      top1Before.emb,
      queries.map((q) => bruteForceTopK("cosine", rows.map((r) => ({ id: r.id, vector: r.emb })), q, 1)[0].id),
    );
    const d = await post("mem_wal/describe/");
    assert.equal(d.status, 200);
    assert.deepEqual(
      d.body.shards[0].indexes.filter((i) => i.kind !== "PK"),
      [],
      "no maintained index before create_index",
    );
  });

  test("createIndex: default vector (IVF_PQ), hnswSq cosine, btree, fts on a table with rows", async () => {
    await table.createIndex("vector").catch(failWithLog);
    await table
      .createIndex("emb", { config: lancedb.Index.hnswSq({ distanceType: "cosine" }), name: "emb_hnsw" })
      .catch(failWithLog);
    await table.createIndex("id", { config: lancedb.Index.btree() }).catch(failWithLog);
    await table.createIndex("text", { config: lancedb.Index.fts() }).catch(failWithLog);

    const list = await table.listIndices();
    const byName = new Map(list.map((i) => [i.name, i]));
    assert.deepEqual([...byName.keys()].sort(), ["emb_hnsw", "id_idx", "text_idx", "vector_idx"]);
    assert.deepEqual(byName.get("vector_idx").columns, ["vector"]);
    assert.deepEqual(byName.get("emb_hnsw").columns, ["emb"]);
    assert.deepEqual(byName.get("id_idx").columns, ["id"]);
    assert.deepEqual(byName.get("text_idx").columns, ["text"]);
    // The client reports the type the index was created with, in its own spelling.
    assert.match(byName.get("vector_idx").indexType, /^(IVF_PQ|IvfPq)$/);
    assert.match(byName.get("emb_hnsw").indexType, /^(IVF_HNSW_SQ|IvfHnswSq)$/);
    assert.match(byName.get("id_idx").indexType, /^(BTREE|BTree)$/);
    assert.match(byName.get("text_idx").indexType, /^(FTS|Inverted|INVERTED)$/);
  });

  test("waitForIndex completes and indexStats counts every row", async () => {
    const names = ["vector_idx", "emb_hnsw", "id_idx", "text_idx"];
    await table.waitForIndex(names, 60).catch(failWithLog);
    for (const n of names) {
      const s = await table.indexStats(n);
      assert.ok(s, `stats of ${n}`);
      assert.equal(s.numIndexedRows, N0, `${n} numIndexedRows`);
      assert.equal(s.numUnindexedRows, 0, `${n} numUnindexedRows`);
      assert.equal(s.numIndices, 1);
    }
    assert.equal((await table.indexStats("vector_idx")).distanceType, "l2");
    assert.equal((await table.indexStats("emb_hnsw")).distanceType, "cosine");
    assert.equal((await table.indexStats("id_idx")).distanceType, undefined);
    assert.equal((await table.indexStats("text_idx")).distanceType, undefined);
    assert.match((await table.indexStats("emb_hnsw")).indexType, /^(IVF_HNSW_SQ|IvfHnswSq)$/);
    assert.equal(await table.indexStats("no_such_idx"), undefined);
  });

  test("vector search through the index gives the same top-1 as before it", async () => {
    assert.deepEqual(await top1("vector", "l2"), top1Before.vector);
    assert.deepEqual(await top1("emb", "cosine"), top1Before.emb);
  });

  test("createIndex with waitTimeoutSeconds waits for the default name", async () => {
    await table.dropIndex("id_idx").catch(failWithLog);
    await table
      .createIndex("id", { config: lancedb.Index.bitmap(), waitTimeoutSeconds: 30 })
      .catch(failWithLog);
    const s = await table.indexStats("id_idx");
    assert.equal(s.numIndexedRows, N0);
    assert.equal(s.numUnindexedRows, 0);
    assert.match(s.indexType, /^(BITMAP|Bitmap)$/);
  });

  test("rows added after the indexes are indexed before they are visible", async () => {
    const late = makeRows(rng(99), N0, N1, { late: true });
    await table.add(late).catch(failWithLog);
    rows.push(...late);
    for (const n of ["vector_idx", "emb_hnsw", "id_idx", "text_idx"]) {
      const s = await table.indexStats(n);
      assert.equal(s.numIndexedRows + s.numUnindexedRows, N0 + N1, n);
    }
    // Each late row is its own nearest neighbour.
    for (const r of late.slice(0, 5)) {
      const hit = await rowsOf(table.search(r.vector).column("vector").limit(1).select(["id"]));
      assert.equal(hit[0].id, r.id);
      assert.ok(Math.abs(hit[0]._distance) < 1e-5);
    }
  });

  test("mem_wal/describe lists the HNSW, BTREE and FTS entries with rows_indexed", async () => {
    const d = await post("mem_wal/describe/");
    assert.equal(d.status, 200);
    const shard = d.body.shards[0];
    const maintained = shard.indexes.filter((i) => i.kind !== "PK");
    const got = maintained.map((i) => `${i.kind} ${i.column} ${i.name}`).sort();
    assert.deepEqual(got, ["BTREE id id_idx", "FTS text text_idx", "HNSW emb emb_hnsw", "HNSW vector vector_idx"]);
    // Rows written before the index sit in the same MemTable (nothing was flushed): the
    // active MemTable's indexes hold every row it holds.
    assert.deepEqual(shard.sstables, []);
    for (const i of maintained) assert.equal(i.rows_indexed, shard.active.rows, `${i.name} rows_indexed`);
    assert.equal(shard.active.rows, N0 + N1);
  });

  test("full-text search finds rows written before and after the index, with _score", async () => {
    const want = idsWithWord(rows, "zebra");
    assert.ok(want.some((id) => id < N0) && want.some((id) => id >= N0), "matches on both sides");
    const res = await rowsOf(table.search("zebra", "fts").select(["id", "text"]).limit(1000)).catch(failWithLog);
    assert.deepEqual(res.map((r) => r.id).sort((a, b) => a - b), want);
    for (let i = 0; i < res.length; i++) {
      assert.equal(typeof res[i]._score, "number");
      assert.ok(res[i]._score > 0, `_score of id ${res[i].id}`);
      if (i > 0) assert.ok(res[i - 1]._score >= res[i]._score, "sorted by _score descending");
    }
    const viaQuery = await rowsOf(table.query().fullTextSearch("golf").select(["id"]).limit(1000));
    assert.deepEqual(viaQuery.map((r) => r.id).sort((a, b) => a - b), idsWithWord(rows, "golf"));
  });

  test("prewarmIndex and dropIndex; unknown names are IndexNotFound", async () => {
    await table.prewarmIndex("text_idx");
    await assert.rejects(table.prewarmIndex("nope_idx"), /nope_idx/);
    await table.dropIndex("vector_idx");
    const names = (await table.listIndices()).map((i) => i.name).sort();
    assert.deepEqual(names, ["emb_hnsw", "id_idx", "text_idx"]);
    assert.equal(await table.indexStats("vector_idx"), undefined);
    await assert.rejects(table.dropIndex("vector_idx"), /vector_idx/);
    const d = await post("mem_wal/describe/");
    assert.ok(!d.body.shards[0].indexes.some((i) => i.name === "vector_idx"));
    // Searching the column still works (exact), with the same answer.
    assert.deepEqual(await top1("vector", "l2"), queries.map((q) => bruteForceTopK("l2", rows, q, 1)[0].id));
  });

  test("invalid index requests are 400 and change nothing", async () => {
    await assert.rejects(table.createIndex("id", { config: lancedb.Index.fts() }), /FTS|utf8/);
    await assert.rejects(table.createIndex("text", { config: lancedb.Index.ivfPq() }), /vector|fixed_size_list/);
    await assert.rejects(table.createIndex("id", { config: lancedb.Index.labelList() }), /LABEL_LIST/);
    const raw = await post("create_index/", { column: "id", index_type: "btree" });
    assert.equal(raw.status, 400);
    assert.equal(raw.body.error, "invalid_input");
    assert.match(raw.body.message, /index_type/);
    const missing = await post("index/nope/stats/", {});
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "index_not_found");
    const names = (await table.listIndices()).map((i) => i.name).sort();
    assert.deepEqual(names, ["emb_hnsw", "id_idx", "text_idx"]);
  });

  // The client percent-encodes spaces and non-ASCII in index/{n}/ paths, but not '%', '#' or
  // '?', so the server refuses such names at create_index/ instead of creating an index the
  // client can never address.
  test("a column that needs quoting: the default name is `{column}_idx` unquoted", async () => {
    const t = await db
      .createTable("quoted", [{ id: 1, "My Col": 5 }, { id: 2, "My Col": 7 }])
      .catch(failWithLog);
    await t.createIndex("My Col", { config: lancedb.Index.btree(), waitTimeoutSeconds: 30 }).catch(failWithLog);
    const list = await t.listIndices();
    assert.deepEqual(
      list.map((i) => i.name),
      ["My Col_idx"],
    );
    assert.equal((await t.indexStats("My Col_idx")).numIndexedRows, 2);
  });

  test("an index name with spaces and non-ASCII round-trips through the encoded path", async () => {
    await assert.rejects(
      table.createIndex("text", { config: lancedb.Index.btree(), name: "text #1" }),
      /must not contain '%', '#' or '\?'/,
    );
    const name = "by text ä";
    await table.createIndex("text", { config: lancedb.Index.btree(), name }).catch(failWithLog);
    await table.waitForIndex([name], 30);
    const s = await table.indexStats(name);
    assert.equal(s.numIndexedRows, N0 + N1);
    await table.prewarmIndex(name);
    await table.dropIndex(name);
    assert.ok(!(await table.listIndices()).some((i) => i.name === name));
  });
});
