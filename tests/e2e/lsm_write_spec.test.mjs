// End-to-end: the LSM write spec (PROTOCOL.md §5.6, docs/SHARDING.md) through the official
// LanceDB Node client (table.setLsmWriteSpec / unsetLsmWriteSpec) and raw HTTP
// (create/?lsm_write_spec=). Part 1 of issue 16: one shard. Asserted with real values from
// mem_wal/describe/: the spec each shard lists, the writer options in force (the spec's
// max_memtable_rows really seals MemTables at that many rows), the MemTables' index set
// (maintained_indexes), and that all of it survives a restart; a 4-bucket spec on a table
// with rows is a 400 (resharding is not built); an identity spec shards by a key column, one
// shard per value, added as values arrive.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";
import { rowsOf } from "./lib/rows.mjs";
import { startServer } from "./lib/server.mjs";

const PK = "lance-schema:unenforced-primary-key";

const schema = () =>
  new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false, new Map([[PK, "true"]])),
    new arrow.Field("text", new arrow.Utf8(), true),
  ]);

const WORDS = ["apple", "banana", "cherry", "damson", "elder"];
const rows = (first, last) => {
  const out = [];
  for (let id = first; id <= last; id++) out.push({ id, text: `${WORDS[id % 5]} fruit ${id}` });
  return out;
};

describe("LSM write spec through the LanceDB client", () => {
  let server;
  let db;

  before(async () => {
    server = await startServer();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const post = async (path, body) => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "x", "x-lancedb-database": "e2e" },
      body,
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  };
  const memWal = async (name) => {
    const r = await post(`/v1/table/${name}/mem_wal/describe/`, "{}");
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  const indexSet = (d) => d.shards[0].indexes.map((i) => (i.kind === "PK" ? "PK" : i.name));

  test("set, describe, writer options and maintained indexes, refusals, restart, unset", async () => {
    const table = await db.createEmptyTable("fruits", schema());
    await table.createIndex("text", { config: lancedb.Index.fts() });
    await table.add(rows(1, 5));
    await table.waitForIndex(["text_idx"], 30);
    let d = await memWal("fruits");
    assert.equal(d.lsm_write_spec, null);
    assert.equal(d.shards[0].spec, null);
    assert.deepEqual(indexSet(d), ["PK", "text_idx"]);

    // unsharded, no maintained index: the MemTables keep only the key index.
    await table.setLsmWriteSpec({ specType: "unsharded" });
    d = await memWal("fruits");
    assert.deepEqual(d.lsm_write_spec, {
      sharding: { mode: "unsharded" },
      maintained_indexes: [],
      writer_config_defaults: {},
    });
    assert.equal(d.shards.length, 1);
    assert.equal(d.shards[0].spec.mode, "unsharded");
    assert.deepEqual(indexSet(d), ["PK"]);
    // A full-text search still finds MemTable rows (scanned exactly there).
    await table.add(rows(6, 15));
    const hits = await rowsOf(table.search("banana", "fts").select(["id"]).limit(50));
    assert.deepEqual(hits.map((h) => h.id).sort((a, b) => a - b), [1, 6, 11]);
    assert.equal(await table.countRows(), 15);

    // bucket on the key with one bucket: writer options from the spec, text_idx maintained.
    await table.setLsmWriteSpec({
      specType: "bucket",
      column: "id",
      numBuckets: 1,
      maintainedIndexes: ["text_idx"],
      writerConfigDefaults: { max_memtable_rows: "10" },
    });
    d = await memWal("fruits");
    const shard = d.shards[0];
    assert.deepEqual(shard.spec, {
      mode: "bucket",
      column: "id",
      num_buckets: 1,
      bucket: 0,
      maintained_indexes: ["text_idx"],
      writer_config_defaults: { max_memtable_rows: "10" },
    });
    assert.equal(shard.writer_settings.max_memtable_rows, 10);
    assert.deepEqual(indexSet(d), ["PK", "text_idx"]);
    const genBefore = shard.active.generation;
    // 35 one-row adds: a MemTable seals at 10 rows, so at least 3 generations are sealed.
    for (let id = 100; id < 135; id++) await table.add(rows(id, id));
    d = await memWal("fruits");
    assert.ok(d.shards[0].active.generation >= genBefore + 3, JSON.stringify(d.shards[0]));
    assert.ok(d.shards[0].active.rows <= 10, JSON.stringify(d.shards[0].active));
    const flushed = await post("/v1/table/fruits/flush/", "{}");
    assert.equal(flushed.status, 200, flushed.text);
    d = await memWal("fruits");
    for (const s of d.shards[0].sstables) {
      if (s.generation > genBefore) assert.ok(s.rows <= 10, JSON.stringify(s));
    }
    assert.equal(await table.countRows(), 50);

    // A 4-bucket spec would move the 50 rows between shards (resharding): 400, nothing changes.
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "bucket", column: "id", numBuckets: 4 }),
      /has 50 rows: changing its shard count from 1 to 4 .*resharding/,
    );
    const raw = await post(
      "/v1/table/fruits/set_lsm_write_spec/",
      JSON.stringify({ sharding: { mode: "bucket", column: "id", num_buckets: 4 }, maintained_indexes: [], writer_config_defaults: {} }),
    );
    assert.equal(raw.status, 400, raw.text);
    assert.equal(raw.json.error, "invalid_input", raw.text);
    assert.match(raw.json.message, /resharding/);
    // Identity sharding by a column outside the key: 400 naming the rule.
    const ident = await post(
      "/v1/table/fruits/set_lsm_write_spec/",
      JSON.stringify({ sharding: { mode: "identity", column: "text" }, maintained_indexes: [], writer_config_defaults: {} }),
    );
    assert.equal(ident.status, 400, ident.text);
    assert.equal(ident.json.error, "invalid_input", ident.text);
    assert.match(ident.json.message, /sharding\.column 'text' must be one of the primary key's columns \(id\)/);
    // A bad writer option or index name is a 400 naming it, and changes nothing.
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "unsharded", writerConfigDefaults: { max_memtable_rows: "lots" } }),
      /writer_config_defaults\.max_memtable_rows must be an integer in \[1, /,
    );
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "unsharded", writerConfigDefaults: { flush_interval: "1" } }),
      /writer_config_defaults\.flush_interval is not a writer option/,
    );
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "unsharded", maintainedIndexes: ["vector_idx"] }),
      /maintained_indexes: 'vector_idx' is not an index of the table/,
    );
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "bucket", column: "text", numBuckets: 1 }),
      /sharding\.column 'text' must be the table's primary key column 'id'/,
    );
    d = await memWal("fruits");
    assert.equal(d.lsm_write_spec.sharding.mode, "bucket");
    assert.equal(d.shards[0].writer_settings.max_memtable_rows, 10);

    // The spec and its effects survive a restart.
    await server.restart();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });  // new port
    d = await memWal("fruits");
    assert.equal(d.shards[0].spec.mode, "bucket");
    assert.equal(d.shards[0].writer_settings.max_memtable_rows, 10);
    assert.deepEqual(indexSet(d), ["PK", "text_idx"]);
    const reopened = await db.openTable("fruits");
    assert.equal(await reopened.countRows(), 50);

    // Unset: the server's options and every index again; a second unset is an error.
    await reopened.unsetLsmWriteSpec();
    d = await memWal("fruits");
    assert.equal(d.lsm_write_spec, null);
    assert.equal(d.shards[0].writer_settings.max_memtable_rows, 100000);
    assert.deepEqual(indexSet(d), ["PK", "text_idx"]);
    await assert.rejects(reopened.unsetLsmWriteSpec(), /no LSM write spec/);
  });

  test("a table without a primary key is refused", async () => {
    const table = await db.createTable("nokey", [{ id: 1, text: "a" }]);
    await assert.rejects(
      table.setLsmWriteSpec({ specType: "unsharded" }),
      /needs a table with a primary key/,
    );
  });

  test("create/?lsm_write_spec= sets the spec with the table", async () => {
    const body = JSON.stringify({
      schema: {
        fields: [
          { name: "id", type: { type: "int64" }, nullable: false },
          { name: "text", type: { type: "string" }, nullable: true },
        ],
      },
      rows: [{ id: 1, text: "a" }],
    });
    const spec = (s) => encodeURIComponent(JSON.stringify(s));
    const identity = await post(
      `/v1/table/made/create/?primary_key=id&lsm_write_spec=${spec({ sharding: { mode: "identity", column: "text" } })}`,
      body,
    );
    assert.equal(identity.status, 400, identity.text);
    assert.match(identity.json.message, /must be one of the primary key's columns/);
    assert.equal((await post("/v1/table/made/describe/", "{}")).status, 404, "nothing was created");
    // A 4-bucket table at create time: four shards, the row in its bucket's.
    const four = await post(
      `/v1/table/made4/create/?primary_key=id&lsm_write_spec=${spec({ sharding: { mode: "bucket", column: "id", num_buckets: 4 } })}`,
      body,
    );
    assert.equal(four.status, 200, four.text);
    const d4 = await memWal("made4");
    assert.deepEqual(d4.shards.map((s) => s.spec.bucket), [0, 1, 2, 3]);
    assert.equal(d4.shards.reduce((n, s) => n + s.active.rows, 0), 1);
    const bad = await post(
      `/v1/table/made/create/?primary_key=id&lsm_write_spec=${spec({ sharding: { mode: "unsharded" }, writer_config_defaults: { max_memtable_rows: "0" } })}`,
      body,
    );
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /writer_config_defaults\.max_memtable_rows/);
    const ok = await post(
      `/v1/table/made/create/?primary_key=id&lsm_write_spec=${spec({ sharding: { mode: "unsharded" }, writer_config_defaults: { max_memtable_rows: "7" } })}`,
      body,
    );
    assert.equal(ok.status, 200, ok.text);
    const d = await memWal("made");
    assert.equal(d.shards[0].spec.mode, "unsharded");
    assert.equal(d.shards[0].writer_settings.max_memtable_rows, 7);
  });

  test("a 4-bucket table through the client: writes route, reads merge, point queries prune", async () => {
    const table = await db.createEmptyTable("buckets", schema());
    await table.setLsmWriteSpec({ specType: "bucket", column: "id", numBuckets: 4 });
    let d = await memWal("buckets");
    assert.deepEqual(d.shards.map((s) => s.spec.bucket), [0, 1, 2, 3]);
    await table.add(rows(1, 200));
    assert.equal(await table.countRows(), 200);
    await table
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute(rows(151, 250).map((r) => ({ ...r, text: `${r.text} v2` })));
    assert.equal(await table.countRows(), 250);
    await table.delete("id > 240");
    await table.update({ where: "id = 7", values: { text: "seven" } });
    assert.equal(await table.countRows(), 240);
    assert.equal(await table.countRows("id IN (1, 2, 3, 245)"), 3);
    d = await memWal("buckets");
    for (const s of d.shards) assert.ok(s.active.rows > 20, JSON.stringify(s.active));
    // A point query reads one shard (explain says which) and finds the row.
    assert.deepEqual(await rowsOf(table.query().where("id = 7").select(["id", "text"])), [
      { id: 7, text: "seven" },
    ]);
    const plan = await table.query().where("id = 7").explainPlan();
    assert.match(plan, /shards: 1 of 4 read: \(id = 7\) -> bucket [0-3] of 4/);
    const all = await table.query().where("text LIKE '%v2'").explainPlan();
    assert.match(all, /shards: 4 of 4 read/);
    const v2 = await rowsOf(table.query().where("text LIKE '%v2'").select(["id"]).limit(1000));
    assert.equal(v2.length, 90);  // 151..240
    // flush/ seals and waits per shard.
    const flushed = await post("/v1/table/buckets/flush/", "{}");
    assert.equal(flushed.status, 200, flushed.text);
    assert.equal(flushed.json.shards.length, 4);
    for (const s of flushed.json.shards) assert.equal(s.waited_generation, s.sealed_generation);
    // The four SSTables reach the L0 trigger (counted over every shard): background
    // compaction may hold the base's work lock; compact/ answers 409 until it is done.
    let compacted;
    for (let i = 0; i < 100; i++) {
      compacted = await post("/v1/table/buckets/compact/", "{}");
      if (compacted.status !== 409) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(compacted.status, 200, compacted.text);
    const base = (await memWal("buckets")).base;
    assert.equal(Object.keys(base.compacted_generation).length, 4, JSON.stringify(base));
    assert.equal(base.live_rows, 240, JSON.stringify(base));
    // A restart reopens every shard over the one base.
    await server.restart();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });
    const reopened = await db.openTable("buckets");
    assert.equal(await reopened.countRows(), 240);
    assert.deepEqual(await rowsOf(reopened.query().where("id = 7").select(["id", "text"])), [
      { id: 7, text: "seven" },
    ]);
    d = await memWal("buckets");
    assert.equal(d.shards.length, 4);
    // Unsetting the spec of a table with rows would move them: 400, nothing changes.
    await assert.rejects(reopened.unsetLsmWriteSpec(), /resharding/);
    assert.equal((await memWal("buckets")).shards.length, 4);
  });

  test("an identity table through the client: a shard per value, added as values arrive", async () => {
    const regionSchema = new arrow.Schema([
      new arrow.Field("region", new arrow.Utf8(), false, new Map([[PK, "true"]])),
      new arrow.Field("id", new arrow.Int64(), false, new Map([[PK, "true"]])),
      new arrow.Field("text", new arrow.Utf8(), true),
    ]);
    const table = await db.createEmptyTable("regions", regionSchema);
    await table.setLsmWriteSpec({ specType: "identity", column: "region" });
    let d = await memWal("regions");
    assert.equal(d.shards.length, 1);
    assert.deepEqual(d.shards[0].spec, {
      mode: "identity", column: "region", value: null, spare: true,
      maintained_indexes: [], writer_config_defaults: {},
    });
    const regionRows = (region, first, last, tag = "") => {
      const out = [];
      for (let id = first; id <= last; id++) out.push({ region, id, text: `${region} ${id}${tag}` });
      return out;
    };
    // Ids are unique across regions: the client's mergeInsert takes one `on` column (id).
    await table.add([...regionRows("eu", 1, 50), ...regionRows("us", 101, 130)]);
    await table.add(regionRows("ap", 201, 220));
    d = await memWal("regions");
    const byValue = Object.fromEntries(d.shards.map((s) => [s.spec.value, s.active.rows]));
    assert.deepEqual(byValue, { eu: 50, us: 30, ap: 20 });
    // Upserts, deletes and updates stay in their value's shard; reads merge every shard.
    await table
      .mergeInsert("id")
      .whenMatchedUpdateAll()
      .whenNotMatchedInsertAll()
      .execute([...regionRows("us", 121, 140, " v2"), ...regionRows("sa", 301, 305)]);
    await table.delete("region = 'eu' AND id > 40");
    assert.equal(await table.countRows(), 50 - 10 + 40 + 20 + 5);
    assert.equal(await table.countRows("region = 'us'"), 40);
    const plan = await table.query().where("region = 'sa'").explainPlan();
    assert.match(plan, /shards: 1 of 4 read: \(region = 'sa'\) -> 1 value/);
    assert.deepEqual(
      (await rowsOf(table.query().where("region = 'us' AND id = 125").select(["id", "text"]))),
      [{ id: 125, text: "us 125 v2" }],
    );
    // A restart keeps every shard and its value.
    await server.restart();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });
    const reopened = await db.openTable("regions");
    assert.equal(await reopened.countRows(), 105);
    d = await memWal("regions");
    assert.deepEqual(d.shards.map((s) => s.spec.value).sort(), ["ap", "eu", "sa", "us"]);
    // Another layout would move the rows: 400.
    await assert.rejects(reopened.unsetLsmWriteSpec(), /changing how rows map to shards/);
  });
});
