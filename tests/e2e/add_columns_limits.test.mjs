// End-to-end: add_columns/ writes new values like an insert does, so --max-string-bytes applies
// to them (README "Limits": every violation is a 4xx naming the limit, and a refused write
// changes nothing). A string literal or expression longer than the limit is refused; the
// table keeps its schema, version and rows.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { startServer } from "./lib/server.mjs";

describe("add_columns/ and --max-string-bytes", () => {
  let server;
  before(async () => {
    server = await startServer({ extraArgs: ["--max-string-bytes", "100"] });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const post = async (path, body, contentType = "application/json") => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType },
      body: body instanceof Uint8Array ? body : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const describeTable = async () => {
    const r = await post("/v1/table/t/describe/", {});
    assert.equal(r.status, 200, r.text);
    return JSON.parse(r.text);
  };

  test("a new column value over the limit is 400 and changes nothing", async () => {
    const body = arrow.tableToIPC(
      new arrow.Table({
        id: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()),
        label: arrow.vectorFromArray(["a", "b", "c"], new arrow.Utf8()),
      }),
      "stream",
    );
    const c = await post("/v1/table/t/create/", body, "application/vnd.apache.arrow.stream");
    assert.equal(c.status, 200, c.text);
    const before = await describeTable();

    const long = "x".repeat(150);
    const r = await post("/v1/table/t/add_columns/", {
      new_columns: [{ name: "big", expression: `'${long}'` }],
    });
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /150 bytes/);
    assert.match(r.text, /--max-string-bytes/);
    assert.match(r.text, /'big'/);
    const after = await describeTable();
    assert.deepEqual(
      after.schema.fields.map((f) => f.name),
      before.schema.fields.map((f) => f.name),
    );
    assert.equal(after.version, before.version);

    // Within the limit (an expression over existing values too): added.
    const ok = await post("/v1/table/t/add_columns/", {
      new_columns: [{ name: "small", expression: `upper(label)` }],
    });
    assert.equal(ok.status, 200, ok.text);
    const n = await post("/v1/table/t/count_rows/", { predicate: "small = 'B'" });
    assert.equal(n.text, "1");
  });
});
