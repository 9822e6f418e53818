// End-to-end: table versions, checkout, restore, tags, stats and renameTable with the real
// LanceDB Node client (@lancedb/lancedb 0.31.0, remote mode) against `strata serve`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./lib/server.mjs";

const rows = (first, n) =>
  Array.from({ length: n }, (_, i) => ({ id: first + i, vector: [first + i, 1, 0, 0] }));

describe("versions, tags, stats and rename through the LanceDB client", () => {
  let server;
  let db;
  const connect = () => lancedb.connect("db://versions", { apiKey: "x", hostOverride: server.url });

  before(async () => {
    server = await startServer();
    db = await connect();
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("every write and index change makes a higher version; listVersions; checkout", async () => {
    const t = await db.createTable("v", rows(0, 5));
    const versions = [await t.version()];
    await t.add(rows(5, 3));
    versions.push(await t.version());
    await t.update({ where: "id = 1", values: { id: 100 } });
    versions.push(await t.version());
    await t.delete("id = 2");
    versions.push(await t.version());
    await t.createIndex("id");
    versions.push(await t.version());
    await t.dropIndex("id_idx");
    versions.push(await t.version());
    for (let i = 1; i < versions.length; i++) {
      assert.ok(versions[i] > versions[i - 1], `versions grow: ${versions.join(", ")}`);
    }
    const current = versions.at(-1);
    assert.equal(current - versions.at(-3), 2, "createIndex and dropIndex are one version each");

    const listed = await t.listVersions();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].version, current);
    assert.deepEqual(listed[0].metadata, {});
    const ts = new Date(listed[0].timestamp).getTime();
    assert.ok(Math.abs(Date.now() - ts) < 60_000, `timestamp ${listed[0].timestamp} is recent`);

    // checkout of the current version works (reads carry the version).
    await t.checkout(current);
    assert.equal(await t.version(), current);
    assert.equal(await t.countRows(), 7);
    // restore() of the checked-out current version: nothing to do, back to latest.
    await t.restore();
    assert.equal(await t.version(), current);
    await t.add(rows(200, 1));
    assert.equal(await t.countRows(), 8);

    // An older version: the clear "time travel" error, naming both versions.
    const old = versions[0];
    await assert.rejects(t.checkout(old), (e) => {
      assert.match(e.message, /time travel is not supported yet/);
      assert.match(e.message, new RegExp(`version ${old}\\b`));
      return true;
    });
    await t.checkoutLatest();
    assert.equal(await t.countRows(), 8);

    // A version newer than the current one: the client's "not found".
    await assert.rejects(t.checkout(current + 100), /not found/i);
  });

  test("tags: create, list, getVersion, update, delete, checkout by tag", async () => {
    const t = await db.createTable("tagged", rows(0, 2));
    const v1 = await t.version();
    await t.add(rows(2, 2));
    const v2 = await t.version();
    const tags = await t.tags();
    await tags.create("first", v1);
    await tags.create("latest", v2);
    assert.equal(await t.version(), v2, "tags are not versions");
    const listed = await tags.list();
    assert.deepEqual(Object.keys(listed).sort(), ["first", "latest"]);
    assert.equal(listed.first.version, v1);
    assert.equal(listed.latest.version, v2);
    assert.ok(listed.first.manifestSize > 0);
    assert.equal(await tags.getVersion("first"), v1);
    await assert.rejects(tags.create("first", v2), /already exists/);
    await assert.rejects(tags.getVersion("nope"), /tag 'nope' does not exist/);
    await assert.rejects(tags.create("bad", v2 + 10), /version/);

    await tags.update("first", v2);
    assert.equal(await tags.getVersion("first"), v2);
    await assert.rejects(tags.update("nope", v1), /tag 'nope' does not exist/);
    // checkout by a tag naming the current version reads it.
    await t.checkout("first");
    assert.equal(await t.countRows(), 4);
    await t.checkoutLatest();

    await tags.delete("first");
    assert.deepEqual(Object.keys(await tags.list()), ["latest"]);
    await assert.rejects(tags.delete("first"), /tag 'first' does not exist/);

    // Tags survive a restart.
    await server.restart(); // a new port: reconnect
    db = await connect();
    const t2 = await db.openTable("tagged");
    const again = await (await t2.tags()).list();
    assert.deepEqual(Object.keys(again), ["latest"]);
    assert.equal(again.latest.version, v2);
    assert.equal(again.latest.manifestSize, listed.latest.manifestSize);
  });

  test("stats", async () => {
    const t = await db.createTable("stats", rows(0, 6));
    await t.add(rows(6, 2));
    await t.delete("id = 0");
    await t.createIndex("id");
    const s = await t.stats();
    assert.equal(s.numRows, 7);
    assert.equal(s.numIndices, 1);
    assert.ok(s.totalBytes > 0);
    // One active MemTable holding 6 + 2 rows and 1 tombstone: one small fragment.
    assert.equal(s.fragmentStats.numFragments, 1);
    assert.equal(s.fragmentStats.numSmallFragments, 1);
    assert.deepEqual(s.fragmentStats.lengths, { min: 9, max: 9, mean: 9, p25: 9, p50: 9, p75: 9, p99: 9 });
  });

  test("renameTable moves the table; the old name is gone; it survives a restart", async () => {
    await db.createTable("before", rows(0, 3));
    await db.createTable("other", rows(0, 1));
    await assert.rejects(db.renameTable("before", "other"), /already exists/);
    await db.renameTable("before", "after");
    let names = await db.tableNames();
    assert.ok(names.includes("after") && !names.includes("before"), names.join(","));
    // A fresh connection (no cached handle) finds no "before".
    await assert.rejects((await connect()).openTable("before"), /not found/i);
    const t = await db.openTable("after");
    assert.equal(await t.countRows(), 3);
    await t.add(rows(3, 1));
    await server.restart();
    db = await connect();
    names = await db.tableNames();
    assert.ok(names.includes("after") && !names.includes("before"), names.join(","));
    assert.equal(await (await db.openTable("after")).countRows(), 4);
  });
});
