// End-to-end: primary-key values may not be null (README "Primary keys"). A nullable key column
// (declared with ?primary_key= or the Lance field metadata) must not let a null key in through
// create/, insert/ (JSON or Arrow), merge_insert/ or after alter_columns relaxes nullability:
// a null-key row cannot be deleted or updated afterwards ("storage rows: key column has nulls"),
// so it would wedge every later update/ of the table. Each refused write changes nothing.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { startServer } from "./lib/server.mjs";

const ARROW = "application/vnd.apache.arrow.stream";

/** Arrow stream of {id: int32 (nullable), name: utf8} rows. */
function stream(ids, names) {
  return arrow.tableToIPC(
    new arrow.Table({
      id: arrow.vectorFromArray(ids, new arrow.Int32()),
      name: arrow.vectorFromArray(names, new arrow.Utf8()),
    }),
    "stream",
  );
}

describe("null primary-key values are refused", () => {
  let server;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const post = async (path, body, contentType = "application/json") => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType },
      body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const count = async (table, predicate) => {
    const r = await post(`/v1/table/${table}/count_rows/`, predicate ? { predicate } : {});
    assert.equal(r.status, 200, r.text);
    return Number(r.text);
  };

  test("create/ with a null key value is 400 and creates nothing", async () => {
    const r = await post("/v1/table/c1/create/?primary_key=id", stream([1, null], ["a", "b"]), ARROW);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /'id'/);
    assert.match(r.text, /null/);
    assert.equal((await post("/v1/table/c1/count_rows/", {})).status, 404);
  });

  test("insert/ and merge_insert/ of a null key are 400; update/ and delete/ keep working", async () => {
    const c = await post("/v1/table/c2/create/?primary_key=id", stream([1, 2], ["a", "b"]), ARROW);
    assert.equal(c.status, 200, c.text);
    const json = await post("/v1/table/c2/insert/", [{ id: null, name: "n" }]);
    assert.equal(json.status, 400, json.text);
    assert.match(json.text, /'id'/);
    const ipc = await post("/v1/table/c2/insert/", stream([3, null], ["c", "n"]), ARROW);
    assert.equal(ipc.status, 400, ipc.text);
    const merge = await post(
      "/v1/table/c2/merge_insert/?on=id&when_not_matched_insert_all=true",
      stream([null], ["n"]),
      ARROW,
    );
    assert.equal(merge.status, 400, merge.text);
    assert.equal(await count("c2"), 2);
    assert.equal(await count("c2", "id IS NULL"), 0);
    const up = await post("/v1/table/c2/update/", { updates: [["name", "upper(name)"]] });
    assert.equal(up.status, 200, up.text);
    assert.equal(await count("c2", "name = 'A'"), 1);
    const del = await post("/v1/table/c2/delete/", { predicate: "id = 2" });
    assert.equal(del.status, 200, del.text);
    assert.equal(await count("c2"), 1);
  });

  test("after alter_columns nullable=true on the key, a null key is still refused", async () => {
    const c = await post("/v1/table/c3/create/?primary_key=id", stream([1, 2], ["a", "b"]), ARROW);
    assert.equal(c.status, 200, c.text);
    // Either the relaxation itself is refused or the null value is: never a null key row.
    await post("/v1/table/c3/alter_columns/", { alterations: [{ path: "id", nullable: true }] });
    const ins = await post("/v1/table/c3/insert/", [{ id: null, name: "n" }]);
    assert.equal(ins.status, 400, ins.text);
    assert.equal(await count("c3", "id IS NULL"), 0);
    const up = await post("/v1/table/c3/update/", { updates: [["name", "upper(name)"]] });
    assert.equal(up.status, 200, up.text);
    assert.equal(await count("c3", "name = 'B'"), 1);
  });
});
