// End-to-end, raw HTTP: every error code of PROTOCOL.md §0 rule 3, each with its status and the
// JSON body {"error": "<code>", "message": "<human sentence>"} (exactly those two keys):
//   invalid_input 400, table_not_found 404, index_not_found 404, payload_too_large 413,
//   backpressure 503 + Retry-After, fenced 409, writer_poisoned 503, flush_timeout 504,
//   internal 500; plus `create/` of an existing table (400 "already exists") and `drop/` of a
//   missing table (200). Every rejected write is checked to have changed nothing.
// unauthorized 401 is tested by operations.test.mjs (API keys).
// How the hard ones are triggered (the tests run as root, so permission tricks do not work):
//  - backpressure: --max-unflushed-bytes 1024 --write-stall-timeout-ms 1; a 2.5 MB insert fills
//    the active MemTable, the next insert seals it and may wait 1 ms for a flush that takes
//    longer (an SSTable write + fsync).
//  - fenced: a second server on the same data directory claims the shard; the first server's
//    next WAL append finds its position taken by the second's fence sentinel. Both run with
//    --no-data-dir-lock (without it the second server does not start: tested here too).
//  - flush_timeout: flush/ with timeout_ms 1 right after a 15 MB insert.
//  - writer_poisoned: the shard's `wal/` directory is replaced by a regular file, so the next
//    WAL append fails (ENOTDIR); once the directory is restored the server reopens the shard
//    by itself (no restart).
//  - internal: the shard manifest files are overwritten with garbage while the server is
//    stopped; the next open of the table is a Corruption -> 500.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as arrow from "apache-arrow";
import { StrataServer, startServer, strataBin } from "./lib/server.mjs";
import { vectorStream } from "./lib/ipc_bodies.mjs";

const DB = "errs";

/** An Arrow IPC stream of {id: int64, name: utf8} rows. */
function nameStream(rows) {
  const t = arrow.tableFromArrays({
    id: BigInt64Array.from(rows.map((r) => BigInt(r.id))),
    name: arrow.vectorFromArray(rows.map((r) => r.name), new arrow.Utf8()),
  });
  return arrow.tableToIPC(t, "stream");
}

/**
 * One request to `base`. `body`: object -> JSON, string/Uint8Array -> as is. Returns
 * {status, headers, text, json}.
 */
async function call(base, route, { body, db = DB, method = "POST", contentType, headers = {} } = {}) {
  const h = { "x-lancedb-database": db, ...headers };
  let payload;
  if (body !== undefined) {
    if (typeof body === "string" || body instanceof Uint8Array) payload = body;
    else payload = JSON.stringify(body);
    h["content-type"] = contentType ?? (body instanceof Uint8Array ? "application/vnd.apache.arrow.stream" : "application/json");
  }
  const res = await fetch(`${base}${route}`, { method, headers: h, body: payload });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Asserts an error answer: the status, a JSON body with exactly the keys error and message,
 * the code, a non-empty message matching every pattern. Returns the message.
 */
function assertError(r, status, code, patterns = [], what = "") {
  const ctx = `${what}: ${r.status} ${r.text.slice(0, 500)}`;
  assert.equal(r.status, status, ctx);
  assert.match(r.headers.get("content-type") ?? "", /application\/json/, ctx);
  assert.ok(r.json && typeof r.json === "object", `${ctx}: body is not JSON`);
  assert.deepEqual(Object.keys(r.json).sort(), ["error", "message"], ctx);
  assert.equal(r.json.error, code, ctx);
  assert.equal(typeof r.json.message, "string", ctx);
  assert.ok(r.json.message.length > 0, ctx);
  for (const p of patterns) assert.match(r.json.message, p, ctx);
  return r.json.message;
}

const tp = (name, route = "") => `/v1/table/${encodeURIComponent(name)}/${route}`;

async function countRows(base, name, db = DB) {
  const r = await call(base, tp(name, "count_rows/"), { body: {}, db });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function createNames(base, name, rows, db = DB) {
  const r = await call(base, tp(name, "create/"), { body: nameStream(rows), db });
  assert.equal(r.status, 200, `create ${name}: ${r.text}`);
}

describe("error codes of PROTOCOL.md §0 rule 3", () => {
  let server;
  let base;
  const failLog = (e) => {
    e.message += `\n${server.logTail(2000)}`;
    throw e;
  };

  before(async () => {
    server = await startServer();
    base = server.url;
    await createNames(base, "people", [
      { id: 1, name: "ann" },
      { id: 2, name: "bob" },
      { id: 3, name: "cy" },
    ]).catch(failLog);
  });

  after(async () => {
    if (server) await server.cleanup();
  });

  describe("invalid_input 400", () => {
    test("malformed JSON bodies", async () => {
      assertError(await call(base, tp("people", "query/"), { body: "{not json" }), 400, "invalid_input", [/not valid JSON/], "query/");
      assertError(await call(base, tp("people", "count_rows/"), { body: "[1, 2" }), 400, "invalid_input", [/not valid JSON/], "count_rows/");
      assertError(await call(base, tp("people", "delete/"), { body: "{\"predicate\": " }), 400, "invalid_input", [], "delete/");
      assertError(await call(base, tp("people", "update/"), { body: "nope" }), 400, "invalid_input", [], "update/");
      assertError(await call(base, tp("people", "insert/"), { body: "[{\"id\": 9,", contentType: "application/json" }),
        400, "invalid_input", [], "JSON insert/");
      assert.equal(await countRows(base, "people"), 3);
    });

    test("bad filters name the problem and its position", async () => {
      assertError(await call(base, tp("people", "count_rows/"), { body: { predicate: "id >" } }), 400, "invalid_input",
        [/position 4/], "truncated predicate");
      assertError(await call(base, tp("people", "query/"), { body: { k: 10, vector: [], filter: "nosuch = 1" } }),
        400, "invalid_input", [/nosuch/], "unknown column");
      assertError(await call(base, tp("people", "delete/"), { body: { predicate: "name = = 'x'" } }), 400,
        "invalid_input", [/position 7/], "delete with a syntax error");
      assertError(await call(base, tp("people", "update/"), { body: { updates: [["name", "'z'"]], predicate: "id >>> 1" } }),
        400, "invalid_input", [/position 4/], "update with a bad predicate");
      assert.equal(await countRows(base, "people"), 3);
      assert.equal(await countRows(base, "people", DB), 3);
    });

    test("wrong field types and values name the field", async () => {
      assertError(await call(base, tp("people", "query/"), { body: { k: "ten", vector: [] } }), 400, "invalid_input",
        [/\bk\b/], "k as a string");
      assertError(await call(base, tp("people", "flush/"), { body: { timeout_ms: -5 } }), 400, "invalid_input",
        [/timeout_ms/], "negative flush timeout");
      assertError(await call(base, tp("people", "update/"), { body: { updates: [["nosuch", "1"]], predicate: null } }),
        400, "invalid_input", [/nosuch/], "update of an unknown column");
      assertError(await call(base, tp("people", "insert/"), { body: [{ id: "abc", name: "x" }] }), 400, "invalid_input",
        [/row 0/, /\bid\b/], "JSON insert with a string id");
      assertError(await call(base, tp("people", "create_index/"), { body: { column: "nosuch", index_type: "BTREE" } }),
        400, "invalid_input", [/nosuch/], "index on an unknown column");
      assertError(await call(base, tp("people", "merge_insert/?on=nosuch&when_not_matched_insert_all=true"),
        { body: nameStream([{ id: 9, name: "z" }]) }), 400, "invalid_input", [/nosuch/], "merge on an unknown column");
      assert.equal(await countRows(base, "people"), 3);
    });

    test("a body that is not an Arrow IPC stream", async () => {
      const junk = new TextEncoder().encode("this is not arrow at all, not even close");
      assertError(await call(base, tp("people", "insert/"), { body: junk }), 400, "invalid_input", [], "insert/");
      assertError(await call(base, tp("fresh", "create/"), { body: junk }), 400, "invalid_input", [], "create/");
      assert.equal(await countRows(base, "people"), 3);
      assertError(await call(base, tp("fresh", "describe/"), { body: {} }), 404, "table_not_found", [], "fresh was not created");
    });

    test("create/ of an existing table: 400 containing 'already exists', data unchanged", async () => {
      const r = await call(base, tp("people", "create/"), { body: nameStream([{ id: 7, name: "new" }]) });
      assertError(r, 400, "invalid_input", [/already exists/, /people/], "create of an existing table");
      const r2 = await call(base, tp("people", "create/?mode=create"), { body: nameStream([{ id: 7, name: "new" }]) });
      assertError(r2, 400, "invalid_input", [/already exists/], "mode=create");
      assert.equal(await countRows(base, "people"), 3);
    });
  });

  describe("table_not_found 404", () => {
    const routes = [
      ["describe/", {}],
      ["count_rows/", {}],
      ["query/", { k: 5, vector: [] }],
      ["insert/", [{ id: 1, name: "x" }]],
      ["update/", { updates: [["name", "'x'"]] }],
      ["delete/", { predicate: "id = 1" }],
      ["create_index/", { column: "id", index_type: "BTREE" }],
      ["index/list/", {}],
      ["flush/", {}],
      ["mem_wal/describe/", undefined],
      ["stats/", undefined],
      ["version/list/", undefined],
    ];
    for (const [route, body] of routes) {
      test(`${route} of a missing table`, async () => {
        assertError(await call(base, tp("ghost", route), { body }), 404, "table_not_found", [/ghost/], route);
      });
    }

    test("merge_insert/ of a missing table", async () => {
      const r = await call(base, tp("ghost", "merge_insert/?on=id&when_not_matched_insert_all=true"), {
        body: nameStream([{ id: 1, name: "x" }]),
      });
      assertError(r, 404, "table_not_found", [/ghost/]);
    });

    test("the message names the decoded name; another database does not see the table", async () => {
      assertError(await call(base, tp("no such tä", "describe/")), 404, "table_not_found", [/no such tä/]);
      assertError(await call(base, tp("people", "count_rows/"), { body: {}, db: "other_db" }), 404, "table_not_found",
        [/people/], "people in other_db");
      assertError(await call(base, tp("people", "count_rows/"), { body: {}, db: "default" }), 404, "table_not_found",
        [/people/], "people in default");
    });
  });

  describe("index_not_found 404", () => {
    test("index/{n}/stats/ and index/{n}/drop/ of a missing index", async () => {
      assertError(await call(base, tp("people", "index/nope_idx/stats/"), { body: {} }), 404, "index_not_found",
        [/nope_idx/], "stats");
      assertError(await call(base, tp("people", "index/nope_idx/drop/")), 404, "index_not_found", [/nope_idx/], "drop");
      // After a real index is created and dropped, its name is not found either.
      const c = await call(base, tp("people", "create_index/"), { body: { column: "id", index_type: "BTREE" } });
      assert.equal(c.status, 200, c.text);
      const s = await call(base, tp("people", "index/id_idx/stats/"), { body: {} });
      assert.equal(s.status, 200, s.text);
      assert.equal(s.json.num_indexed_rows + s.json.num_unindexed_rows, 3);
      assert.equal((await call(base, tp("people", "index/id_idx/drop/"))).status, 200);
      assertError(await call(base, tp("people", "index/id_idx/stats/"), { body: {} }), 404, "index_not_found", [/id_idx/]);
      assertError(await call(base, tp("people", "index/id_idx/drop/")), 404, "index_not_found", [/id_idx/]);
    });
  });

  test("drop/ of a missing table is 200", async () => {
    const r = await call(base, tp("never_existed", "drop/"));
    assert.equal(r.status, 200, r.text);
    const r2 = await call(base, tp("never_existed", "drop"));
    assert.equal(r2.status, 200, r2.text);
    assert.equal(await countRows(base, "people"), 3);
  });

  test("flush_timeout 504: flush/ with timeout_ms 1 while a 15 MB MemTable flushes", async () => {
    const N = 60000;
    const DIM = 64;
    await call(base, tp("big", "create/"), { body: vectorStream(0, 1, DIM) }).then((r) => assert.equal(r.status, 200, r.text));
    const ins = await call(base, tp("big", "insert/"), { body: vectorStream(1, N - 1, DIM, 7) });
    assert.equal(ins.status, 200, ins.text);
    const r = await call(base, tp("big", "flush/"), { body: { timeout_ms: 1 } });
    const msg = assertError(r, 504, "flush_timeout", [/generation \d+/], "flush with timeout_ms 1");
    const pending = Number(/generation (\d+)/.exec(msg)[1]);
    // The flush goes on in the background; a flush with the default timeout waits for it.
    const ok = await call(base, tp("big", "flush/"), { body: {} });
    assert.equal(ok.status, 200, ok.text);
    const d = await call(base, tp("big", "mem_wal/describe/"));
    const gens = d.json.shards[0].sstables.map((s) => s.generation);
    assert.ok(gens.includes(pending), `generation ${pending} of the timed-out flush in sstables ${gens}`);
    assert.equal(d.json.shards[0].sstables.reduce((a, s) => a + s.rows, 0), N);
    assert.equal(await countRows(base, "big"), N);
  });
});

describe("payload_too_large 413 (--max-body-bytes 65536)", () => {
  let server;
  before(async () => {
    server = await startServer({ extraArgs: ["--max-body-bytes", "65536"] });
    await createNames(server.url, "p", [{ id: 1, name: "a" }]);
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const bigJsonRows = (n) => Array.from({ length: n }, (_, i) => ({ id: 100 + i, name: "x".repeat(40) }));

  test("a declared Content-Length over the limit: 413 naming the limit, nothing written", async () => {
    const body = JSON.stringify(bigJsonRows(2000)); // ~120 KB
    assert.ok(body.length > 65536);
    const r = await call(server.url, tp("p", "insert/"), { body, contentType: "application/json" });
    assertError(r, 413, "payload_too_large", [/65536/]);
    assert.equal(await countRows(server.url, "p"), 1);
  });

  test("a chunked body over the limit: 413 naming the limit, nothing written", async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(bigJsonRows(2000)));
    const stream = new ReadableStream({
      start(c) {
        for (let off = 0; off < bytes.length; off += 8192) c.enqueue(bytes.subarray(off, off + 8192));
        c.close();
      },
    });
    let res;
    try {
      res = await fetch(`${server.url}${tp("p", "insert/")}`, {
        method: "POST",
        headers: { "x-lancedb-database": DB, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      });
    } catch (e) {
      assert.fail(`chunked upload failed without an answer: ${e.message} ${e.cause ?? ""}`);
    }
    const text = await res.text();
    assertError({ status: res.status, headers: res.headers, text, json: JSON.parse(text) }, 413, "payload_too_large", [/65536/]);
    assert.equal(await countRows(server.url, "p"), 1);
  });

  test("a body just under the limit is accepted", async () => {
    const rows = bigJsonRows(800); // ~48 KB
    const body = JSON.stringify(rows);
    assert.ok(body.length < 65536);
    const r = await call(server.url, tp("p", "insert/"), { body, contentType: "application/json" });
    assert.equal(r.status, 200, r.text);
    assert.equal(await countRows(server.url, "p"), 801);
  });
});

describe("backpressure 503 (--max-unflushed-bytes 1024 --write-stall-timeout-ms 1)", () => {
  let server;
  before(async () => {
    server = await startServer({ extraArgs: ["--max-unflushed-bytes", "1024", "--write-stall-timeout-ms", "1"] });
    const r = await call(server.url, tp("bp", "create/"), { body: vectorStream(0, 1, 32) });
    assert.equal(r.status, 200, r.text);
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("an insert behind a 2.5 MB unflushed MemTable is 503 backpressure with Retry-After; nothing written", async (ctx) => {
    let acked = 1;
    let got;
    let attempts = 0;
    let nextId = 1;
    // Each round: a big insert fills the active MemTable (the first one after a drain is never
    // stalled), then a 1-row insert must seal it and wait 1 ms for its flush.
    while (!got && attempts < 5) {
      attempts++;
      const big = await call(server.url, tp("bp", "insert/"), { body: vectorStream(nextId, 20000, 32, attempts) });
      if (big.status === 200) {
        acked += 20000;
        nextId += 20000;
      } else {
        assertError(big, 503, "backpressure");
      }
      const small = await call(server.url, tp("bp", "insert/"), { body: vectorStream(nextId, 1, 32) });
      if (small.status === 200) {
        acked += 1;
        nextId += 1;
      } else {
        got = small;
      }
    }
    assert.ok(got, `no 503 in ${attempts} rounds`);
    ctx.diagnostic(`503 backpressure in round ${attempts}: ${got.json.message}`);
    assertError(got, 503, "backpressure", [/max_unflushed_bytes/, /1024/, /retry/i]);
    const retryAfter = got.headers.get("retry-after");
    assert.match(retryAfter ?? "", /^\d+$/, "Retry-After is a number of seconds");
    assert.ok(Number(retryAfter) >= 1);
    // Once the flush drains, the same insert goes through (the error was retryable).
    let ok;
    for (let i = 0; i < 100 && !ok; i++) {
      const r = await call(server.url, tp("bp", "insert/"), { body: vectorStream(nextId, 1, 32) });
      if (r.status === 200) ok = r;
      else {
        assertError(r, 503, "backpressure");
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    assert.ok(ok, "the insert never succeeded after the stall");
    acked += 1;
    assert.equal(await countRows(server.url, "bp"), acked, "only acknowledged rows exist");
  });
});

describe("fenced 409: two servers on the same data directory", () => {
  let a;
  let b;
  after(async () => {
    if (b) await b.stop();
    if (a) await a.cleanup();
  });

  test("the second server claims the shard; the first one's next write is 409 fenced", async () => {
    a = await startServer({ extraArgs: ["--no-data-dir-lock"] });
    await createNames(a.url, "f", [
      { id: 1, name: "one" },
      { id: 2, name: "two" },
    ]);
    assert.equal((await fetch(`${a.url}/readyz`)).status, 200);
    b = new StrataServer({ dataDir: a.dataDir, extraArgs: ["--no-data-dir-lock"] });
    await b.start();
    assert.equal(await countRows(b.url, "f"), 2, "the second server replays the WAL");
    const r = await call(a.url, tp("f", "insert/"), { body: [{ id: 3, name: "three" }] });
    assertError(r, 409, "fenced", [/another writer|claimed|epoch/i, /This server is fenced/, /GET \/readyz says fenced/]);
    const again = await call(a.url, tp("f", "delete/"), { body: { predicate: "id = 1" } });
    assertError(again, 409, "fenced", [/This server is fenced/], "fenced is sticky");
    // /readyz of the fenced server: neither reads (stale) nor writes.
    const ready = await fetch(`${a.url}/readyz`);
    assert.equal(ready.status, 503);
    const rj = await ready.json();
    assert.equal(rj.ready, false);
    assert.equal(rj.reads, false);
    assert.equal(rj.writes, false);
    assert.deepEqual(
      rj.reasons.map((x) => x.state),
      ["fenced"],
    );
    assert.equal((await fetch(`${b.url}/readyz`)).status, 200, "the new owner is ready");
    // The new owner writes; the fenced writes left nothing.
    const ok = await call(b.url, tp("f", "insert/"), { body: [{ id: 4, name: "four" }] });
    assert.equal(ok.status, 200, ok.text);
    const rows = await call(b.url, tp("f", "count_rows/"), { body: { predicate: "id IN (3, 4)" } });
    assert.equal(rows.json, 1);
    assert.equal(await countRows(b.url, "f"), 3);
  });
});

/** Starts `s`, which must fail; returns the start error's message plus the whole stderr. */
async function failedStart(s) {
  const err = await s.start().then(
    () => null,
    (e) => e,
  );
  assert.ok(err, "the server started");
  // The exit can be reported before the last stderr bytes were read.
  await new Promise((res) => setTimeout(res, 200));
  return `${err.message}\n${s.stderr}`;
}

describe("the data directory lock: a second server on a locked directory does not start", () => {
  let a;
  after(async () => {
    if (a) await a.cleanup();
  });

  test("exit code 1, the error names the directory and the holder's pid; the first server is not fenced", async () => {
    a = await startServer();
    await createNames(a.url, "l", [{ id: 1, name: "one" }]);
    const lockFile = path.join(a.dataDir, "~strata.lock");
    assert.equal(fs.readFileSync(lockFile, "utf8"), `pid ${a.child.pid}\n`);
    const second = new StrataServer({ dataDir: a.dataDir });
    const text = await failedStart(second);
    assert.match(text, /exited \(code 1/);
    assert.ok(
      text.includes(`data directory ${a.dataDir} is in use by another strata server (pid ${a.child.pid}, lock file ${lockFile})`),
      text,
    );
    // The first server still owns its table.
    const r = await call(a.url, tp("l", "insert/"), { body: [{ id: 2, name: "two" }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(await countRows(a.url, "l"), 2);
    // Stopped, it releases the lock (the file stays): a new server starts on the directory.
    await a.stop();
    const c = new StrataServer({ dataDir: a.dataDir });
    await c.start();
    assert.equal(await countRows(c.url, "l"), 2);
    assert.equal(fs.readFileSync(lockFile, "utf8"), `pid ${c.child.pid}\n`);
    await c.stop();
  });

  test("a killed (-9) server leaves no lock behind", async () => {
    const k = await startServer();
    try {
      await k.kill9();
      const again = new StrataServer({ dataDir: k.dataDir });
      await again.start();
      assert.equal((await fetch(`${again.url}/healthz`)).status, 200);
      await again.stop();
    } finally {
      await k.cleanup();
    }
  });
});

describe("a taken port: the second server exits naming the port", () => {
  test("exit code 1 and 'port N on 127.0.0.1 is already in use'; the first keeps every request", async () => {
    const a = await startServer();
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "strata-e2e-port-"));
    try {
      // Spawned directly: StrataServer always passes --port 0.
      const child = spawn(strataBin(), ["serve", "--data", other, "--host", "127.0.0.1", "--port", String(a.port)], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d) => (out += d));
      // A server that did start would never exit by itself.
      const timer = setTimeout(() => child.kill("SIGKILL"), 15000);
      const code = await new Promise((res) => child.on("close", (c) => res(c)));
      clearTimeout(timer);
      assert.equal(code, 1, out);
      assert.ok(out.includes(`strata serve: IOError: port ${a.port} on 127.0.0.1 is already in use`), out);
      assert.ok(!out.includes("strata listening"), out);
      for (let i = 0; i < 8; i++) {
        const r = await fetch(`${a.url}/v1/table/`, { headers: { "x-lancedb-database": DB } });
        assert.equal(r.status, 200);
      }
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
      await a.cleanup();
    }
  });
});

describe("writer_poisoned 503 and internal 500 (storage failures)", () => {
  let server;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  const shardDir = (table) => {
    const root = path.join(server.dataDir, DB, table, "_mem_wal");
    const shards = fs.readdirSync(root);
    assert.equal(shards.length, 1, `shards of ${table}: ${shards}`);
    return path.join(root, shards[0]);
  };

  test("writer_poisoned: a WAL append that fails poisons the writer; reads go on; /readyz says so; writes resume without a restart", async () => {
    await createNames(server.url, "w", [
      { id: 1, name: "a" },
      { id: 2, name: "b" },
    ]);
    const wal = path.join(shardDir("w"), "wal");
    fs.renameSync(wal, `${wal}.saved`);
    fs.writeFileSync(wal, "not a directory");
    let restored = false;
    try {
      const r = await call(server.url, tp("w", "insert/"), { body: [{ id: 3, name: "c" }] });
      assertError(r, 503, "writer_poisoned", [/poisoned/]);
      assert.equal(r.headers.get("retry-after"), "2");
      const r2 = await call(server.url, tp("w", "update/"), { body: { updates: [["name", "'z'"]], predicate: "id = 1" } });
      assertError(r2, 503, "writer_poisoned", [], "poisoned while the WAL directory is broken");
      assert.equal(await countRows(server.url, "w"), 2, "reads keep working; the failed rows are invisible");
      const d = await call(server.url, tp("w", "mem_wal/describe/"));
      assert.equal(d.json.shards[0].state, "poisoned");
      assert.match(d.json.shards[0].state_reason, /poisoned/);
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 503);
      const body = await ready.json();
      assert.equal(body.reads, true);
      assert.equal(body.writes, false);
      const mine = body.reasons.find((x) => x.table === "w");
      assert.equal(mine.state, "poisoned", JSON.stringify(body));
      const readsOnly = await fetch(`${server.url}/readyz?for=reads`);
      assert.equal(readsOnly.status, 200);
      const bogus = await fetch(`${server.url}/readyz?for=bogus`);
      assert.equal(bogus.status, 400);
      // The shard is reopened in the background once the WAL directory works again.
      fs.rmSync(wal, { force: true });
      fs.renameSync(`${wal}.saved`, wal);
      restored = true;
      let ok;
      for (let i = 0; i < 200; i++) {
        ok = await call(server.url, tp("w", "insert/"), { body: [{ id: 3, name: "c" }] });
        if (ok.status === 200) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      assert.equal(ok.status, 200, ok.text);
      const after = await call(server.url, tp("w", "mem_wal/describe/"));
      assert.equal(after.json.shards[0].state, "open");
      assert.equal(after.json.shards[0].recovery.recoveries, 1);
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    } finally {
      if (!restored) {
        fs.rmSync(wal, { force: true });
        fs.renameSync(`${wal}.saved`, wal);
      }
    }
    assert.equal(await countRows(server.url, "w"), 3);
    // And across a restart: every acknowledged row exactly once.
    await server.stop();
    await server.start();
    assert.equal(await countRows(server.url, "w"), 3);
  });

  test("internal 500: a corrupt shard manifest is a 500 naming it, on every request", async () => {
    await createNames(server.url, "c", [{ id: 1, name: "a" }]);
    await server.stop();
    const dir = path.join(shardDir("c"), "manifest");
    for (const f of fs.readdirSync(dir)) {
      if (f.endsWith(".binpb")) fs.writeFileSync(path.join(dir, f), "garbage, not a protobuf");
    }
    await server.start();
    for (let i = 0; i < 2; i++) {
      const r = await call(server.url, tp("c", "count_rows/"), { body: {} });
      assertError(r, 500, "internal", [/manifest/i]);
    }
    // Other tables are unaffected.
    assert.equal(await countRows(server.url, "w"), 3);
  });
});

describe("insufficient_storage 507 (free space below --min-free-bytes)", () => {
  let server;
  before(async () => {
    // A floor no disk meets: every row write is refused up front.
    server = await startServer({ extraArgs: ["--min-free-bytes", String(2 ** 50)] });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("writes are refused with 507 naming the floor and change nothing; reads, flush and /readyz report it", async () => {
    // Creating an empty table writes only manifests (not refused).
    const empty = await call(server.url, tp("s", "create/"), { body: nameStream([]) });
    assert.equal(empty.status, 200, empty.text);
    const r = await call(server.url, tp("s", "insert/"), { body: [{ id: 1, name: "a" }] });
    assertError(r, 507, "insufficient_storage", [/below the floor of 1125899906842624 bytes/, /--min-free-bytes/]);
    assert.equal(r.headers.get("retry-after"), "5");
    assert.equal(await countRows(server.url, "s"), 0, "nothing written");
    const flush = await call(server.url, tp("s", "flush/"), { body: {} });
    assert.equal(flush.status, 200, flush.text);
    const d = await call(server.url, tp("s", "mem_wal/describe/"));
    assert.equal(d.json.shards[0].state, "open", "refused, not poisoned");
    assert.equal(d.json.disk.below_floor, true);
    assert.equal(d.json.disk.min_free_bytes, 2 ** 50);
    assert.ok(d.json.disk.writes_refused >= 1);
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    const body = await ready.json();
    assert.equal(body.writes, false);
    assert.equal(body.reads, true);
    assert.equal(body.reasons[0].state, "below_free_space_floor");
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^strata_disk_below_floor 1$/m);
    assert.match(metrics, /^strata_writes_refused_low_space_total\{database="errs",table="s"\} [1-9]/m);
    assert.match(metrics, /^strata_shard_writer_state\{database="errs",table="s",shard="[^"]+",state="open"\} 1$/m);
  });
});
