// Operator side of `strata serve` (issue 6): API keys (401 without or with a wrong key, 200
// with the right one, through raw HTTP and the LanceDB client's apiKey; /healthz open; an
// unauthenticated 256 MiB upload answered before any body byte is sent), request-id dedupe (a
// retried delete/ or insert/ with the same x-request-id is applied once), structured request logs, and
// SIGTERM during sustained concurrent inserts (exit code 0, every acknowledged row present
// after a restart).
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import assert from 'node:assert/strict';
import net from 'node:net';
import {after, before, describe, test} from 'node:test';

import {startServer} from './lib/server.mjs';

const SCHEMA = new arrow.Schema([
  new arrow.Field('id', new arrow.Int64(), false),
  new arrow.Field('tag', new arrow.Utf8(), true),
]);

/** Row objects {id, tag} (cast by the client to SCHEMA). */
function rowsTable(ids, tag) {
  return ids.map((id) => ({id, tag}));
}

async function post(url, path, body, headers = {}) {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {status: res.status, headers: res.headers, text: await res.text()};
}

async function get(url, path, headers = {}) {
  const res = await fetch(url + path, {headers});
  return {status: res.status, headers: res.headers, text: await res.text()};
}

/** Sorted ids of table `name` via count_rows/query of the LanceDB client. */
async function idsOf(db, name) {
  const table = await db.openTable(name);
  const rows = await table.query().select(['id']).toArray();
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Raw HTTP/1.1 exchange on a socket: sends `head` only, resolves with the response text. */
function rawExchange(port, head, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; got ${JSON.stringify(data)}`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(head));
    sock.on('data', (d) => {
      data += d;
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      if (data)
        resolve(data);
      else
        reject(e);
    });
  });
}

describe('API keys', () => {
  const FLAG_KEY = 'flag-key-' + Math.random().toString(36).slice(2);
  const ENV_KEY = 'env-key-' + Math.random().toString(36).slice(2);
  const WRONG_KEY = 'wrong-key-' + Math.random().toString(36).slice(2);
  let server;

  before(async () => {
    const saved = process.env.STRATA_API_KEYS;
    process.env.STRATA_API_KEYS = `,${ENV_KEY},,`;
    try {
      server = await startServer({extraArgs: ['--api-key', FLAG_KEY, '--log-format', 'json']});
    } finally {
      if (saved === undefined)
        delete process.env.STRATA_API_KEYS;
      else
        process.env.STRATA_API_KEYS = saved;
    }
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test(
      '/healthz needs no key; every other route answers 401 without or with a wrong key',
      async () => {
        const health = await get(server.url, '/healthz');
        assert.equal(health.status, 200);
        assert.equal(health.text, 'ok');

        for (const headers of [{}, {'x-api-key': WRONG_KEY}, {'x-api-key': ''}]) {
          for (const path of ['/v1/table/', '/metrics']) {
            const r = await get(server.url, path, headers);
            assert.equal(r.status, 401, `${path} with ${JSON.stringify(headers)}`);
            const body = JSON.parse(r.text);
            assert.equal(body.error, 'unauthorized');
            assert.match(body.message, /x-api-key/);
            assert.ok(
                !r.text.includes(WRONG_KEY) && !r.text.includes(FLAG_KEY) &&
                !r.text.includes(ENV_KEY));
          }
          const w = await post(server.url, '/v1/table/t1/count_rows/', {}, headers);
          assert.equal(w.status, 401);
          assert.equal(JSON.parse(w.text).error, 'unauthorized');
        }
        // POST /healthz is not the open route.
        const postHealth = await post(server.url, '/healthz', '', {});
        assert.equal(postHealth.status, 401);
      });

  test('the right key (from --api-key or STRATA_API_KEYS) is accepted', async () => {
    for (const key of [FLAG_KEY, ENV_KEY]) {
      const r = await get(server.url, '/v1/table/', {'x-api-key': key});
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(JSON.parse(r.text).tables, []);
    }
    // A missing table is 404 (so the key check passed and routing ran).
    const missing =
        await post(server.url, '/v1/table/nope/count_rows/', {}, {'x-api-key': FLAG_KEY});
    assert.equal(missing.status, 404);
  });

  test('LanceDB client: apiKey works, a wrong apiKey surfaces 401', async () => {
    const db = await lancedb.connect('db://default', {apiKey: FLAG_KEY, hostOverride: server.url});
    const table = await db.createTable('keyed', rowsTable([1, 2, 3], 'a'), {schema: SCHEMA});
    await table.add(rowsTable([4, 5], 'b'));
    assert.equal(await table.countRows(), 5);
    assert.equal(await table.countRows('id > 3'), 2);
    assert.deepEqual(await db.tableNames(), ['keyed']);

    const bad =
        await lancedb.connect('db://default', {apiKey: WRONG_KEY, hostOverride: server.url});
    await assert.rejects(bad.tableNames(), (e) => {
      assert.match(String(e.message), /401/);
      assert.match(String(e.message), /unauthorized/);
      return true;
    });
    // The raw route agrees with the client.
    const r = await post(
        server.url, '/v1/table/keyed/count_rows/', {predicate: 'id <= 2'}, {'x-api-key': ENV_KEY});
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.text), 2);
  });

  test(
      'an unauthenticated 256 MiB upload is answered 401 before any body byte is sent',
      async () => {
        const t0 = Date.now();
        const answer = await rawExchange(
            server.port,
            'POST /v1/table/keyed/insert/ HTTP/1.1\r\nHost: x\r\n' +
                'Content-Type: application/vnd.apache.arrow.stream\r\n' +
                `Content-Length: ${256 * 1024 * 1024}\r\n\r\n`,
        );
        const elapsed = Date.now() - t0;
        assert.match(answer, /^HTTP\/1\.1 401 /);
        assert.match(answer, /\r\nConnection: close\r\n/i);
        assert.match(answer, /"error":"unauthorized"/);
        // The server closed the connection on its own (rawExchange resolves on close), quickly.
        assert.ok(elapsed < 3000, `answered in ${elapsed} ms`);
        // And nothing was written.
        const db =
            await lancedb.connect('db://default', {apiKey: FLAG_KEY, hostOverride: server.url});
        assert.equal(await (await db.openTable('keyed')).countRows(), 5);
      });

  test(
      'request logs: one JSON object per request with id, route, status; keys never logged',
      async () => {
        const rid = 'log-probe-' + Math.random().toString(36).slice(2);
        const r = await post(server.url, '/v1/table/keyed/count_rows/', {predicate: 'id = 1'}, {
          'x-api-key': FLAG_KEY,
          'x-request-id': rid,
          'accept-encoding': 'identity',  // bytes_out counts the (possibly gzip-compressed) body
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('x-request-id'), rid);
        const denied = await post(server.url, '/v1/table/keyed/count_rows/', {}, {
          'x-api-key': WRONG_KEY,
          'x-request-id': rid + '-denied',
        });
        assert.equal(denied.status, 401);
        // A request without x-request-id gets a generated one (a UUID) echoed back.
        const anon = await get(server.url, '/healthz');
        assert.match(
            anon.headers.get('x-request-id'),
            /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

        // The logger runs right after the response is written: poll briefly.
        let lines = [];
        for (let i = 0; i < 50; i++) {
          lines =
              server.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
          if (lines.some((l) => l.request_id === rid + '-denied')) break;
          await new Promise((res) => setTimeout(res, 50));
        }
        const ok = lines.find((l) => l.request_id === rid);
        assert.ok(ok, server.logTail());
        assert.equal(ok.logger, 'request');
        assert.equal(ok.level, 'info');
        assert.equal(ok.method, 'POST');
        assert.equal(ok.route, 'count_rows');
        assert.equal(ok.db, 'default');
        assert.equal(ok.table, 'keyed');
        assert.equal(ok.status, 200);
        assert.equal(ok.bytes_in, JSON.stringify({predicate: 'id = 1'}).length);
        assert.equal(ok.bytes_out, 1);  // the bare integer "1"
        assert.equal(typeof ok.duration_ms, 'number');
        assert.match(ok.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const no = lines.find((l) => l.request_id === rid + '-denied');
        assert.equal(no.status, 401);
        assert.equal(no.level, 'warning');
        assert.match(no.error, /^unauthorized: invalid x-api-key/);
        assert.ok(lines.some((l) => l.logger === 'strata' && /serving data directory/.test(l.msg)));
        for (const key of [FLAG_KEY, ENV_KEY, WRONG_KEY]) {
          assert.ok(!server.stderr.includes(key), 'a key appears in the log');
        }
      });
});

describe('request-id dedupe', () => {
  let server;
  let db;
  before(async () => {
    server = await startServer();
    db = await lancedb.connect(
        'db://default', {apiKey: 'ignored-without-keys', hostOverride: server.url});
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test('a retried delete/ with the same x-request-id is applied once', async () => {
    await db.createTable(
        'dd', rowsTable([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'first'), {schema: SCHEMA});
    const rid = 'retry-' + Math.random().toString(36).slice(2);
    const first = await post(
        server.url, '/v1/table/dd/delete/', {predicate: 'id < 5'}, {'x-request-id': rid});
    assert.equal(first.status, 200, first.text);
    const firstBody = JSON.parse(first.text);
    assert.equal(firstBody.num_deleted_rows, 5);
    assert.deepEqual(await idsOf(db, 'dd'), [5, 6, 7, 8, 9]);

    // New rows with id < 5 (JSON insert extension).
    const ins = await post(server.url, '/v1/table/dd/insert/', [
      {id: 1, tag: 'second'},
      {id: 2, tag: 'second'},
      {id: 3, tag: 'second'},
    ]);
    assert.equal(ins.status, 200, ins.text);

    // The retry (same id, same body) gets the first answer and deletes nothing.
    const retry = await post(
        server.url, '/v1/table/dd/delete/', {predicate: 'id < 5'}, {'x-request-id': rid});
    assert.equal(retry.status, first.status);
    assert.equal(retry.text, first.text);
    assert.equal(retry.headers.get('content-type'), first.headers.get('content-type'));
    assert.equal(retry.headers.get('x-strata-replayed'), 'true');
    assert.deepEqual(await idsOf(db, 'dd'), [1, 2, 3, 5, 6, 7, 8, 9]);

    // Concurrent repeats: all get the same first answer.
    const many = await Promise.all(
        Array.from(
            {length: 6},
            () => post(
                server.url, '/v1/table/dd/delete/', {predicate: 'id < 5'}, {'x-request-id': rid}),
            ),
    );
    for (const m of many) assert.equal(m.text, first.text);
    assert.deepEqual(await idsOf(db, 'dd'), [1, 2, 3, 5, 6, 7, 8, 9]);

    // The same id with another body is refused, naming x-request-id; nothing changes.
    const clash = await post(
        server.url, '/v1/table/dd/delete/', {predicate: 'id < 9'}, {'x-request-id': rid});
    assert.equal(clash.status, 400);
    assert.equal(JSON.parse(clash.text).error, 'invalid_input');
    assert.match(JSON.parse(clash.text).message, /x-request-id/);
    assert.deepEqual(await idsOf(db, 'dd'), [1, 2, 3, 5, 6, 7, 8, 9]);

    // A new id runs: it deletes the three new rows.
    const fresh = await post(
        server.url, '/v1/table/dd/delete/', {predicate: 'id < 5'}, {'x-request-id': rid + '-2'});
    assert.equal(fresh.status, 200);
    assert.equal(JSON.parse(fresh.text).num_deleted_rows, 3);
    assert.ok(JSON.parse(fresh.text).version > firstBody.version);
    assert.deepEqual(await idsOf(db, 'dd'), [5, 6, 7, 8, 9]);

    // The same id on another table is a different request.
    await db.createTable('dd2', rowsTable([0, 7], 'x'), {schema: SCHEMA});
    const other = await post(
        server.url, '/v1/table/dd2/delete/', {predicate: 'id < 5'}, {'x-request-id': rid});
    assert.equal(JSON.parse(other.text).num_deleted_rows, 1);
  });

  test('update/ retried with the same id is applied once; errors answer the same', async () => {
    const counterSchema = new arrow.Schema([
      new arrow.Field('id', new arrow.Int64(), false),
      new arrow.Field('n', new arrow.Int64(), true),
    ]);
    await db.createTable('uu', [{id: 1, n: 10}, {id: 2, n: 20}], {schema: counterSchema});
    const rid = 'upd-' + Math.random().toString(36).slice(2);
    const body = {updates: [['n', 'n + 1']], predicate: 'id = 1'};
    const a = await post(server.url, '/v1/table/uu/update/', body, {'x-request-id': rid});
    assert.equal(a.status, 200, a.text);
    const b = await post(server.url, '/v1/table/uu/update/', body, {'x-request-id': rid});
    assert.equal(b.text, a.text);
    const rows = await (await db.openTable('uu')).query().where('id = 1').toArray();
    assert.equal(Number(rows[0].n), 11);  // not 12
    // A 4xx answer is remembered as well.
    const badBody = {updates: [['no_such_column', '1']], predicate: null};
    const e1 =
        await post(server.url, '/v1/table/uu/update/', badBody, {'x-request-id': rid + '-bad'});
    assert.equal(e1.status, 400);
    const e2 =
        await post(server.url, '/v1/table/uu/update/', badBody, {'x-request-id': rid + '-bad'});
    assert.equal(e2.status, 400);
    assert.equal(e2.text, e1.text);
  });

  test('insert/ repeated with the same x-request-id inserts once; another body is refused', async () => {
    await db.createTable('ii', rowsTable([0], 'seed'), {schema: SCHEMA});
    const rid = 'ins-' + Math.random().toString(36).slice(2);
    const rows = [{id: 1, tag: 'a'}, {id: 2, tag: 'b'}];
    const first = await post(server.url, '/v1/table/ii/insert/', rows, {'x-request-id': rid});
    assert.equal(first.status, 200, first.text);
    const again = await post(server.url, '/v1/table/ii/insert/', rows, {'x-request-id': rid});
    assert.equal(again.status, 200, again.text);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('x-strata-replayed'), 'true');
    assert.deepEqual(await idsOf(db, 'ii'), [0, 1, 2]);  // no primary key: a second copy would show
    const clash = await post(
        server.url, '/v1/table/ii/insert/', [{id: 3, tag: 'c'}], {'x-request-id': rid});
    assert.equal(clash.status, 400);
    assert.match(JSON.parse(clash.text).message, /x-request-id/);
    assert.deepEqual(await idsOf(db, 'ii'), [0, 1, 2]);
    // The LanceDB client's add() sends a new id per call: both calls insert.
    const table = await db.openTable('ii');
    await table.add(rowsTable([4], 'sdk'));
    await table.add(rowsTable([4], 'sdk'));
    assert.deepEqual(await idsOf(db, 'ii'), [0, 1, 2, 4, 4]);
  });

  test(
      'the LanceDB client\'s delete and update still work (each call has its own id)', async () => {
        const table = await db.createTable('cl', rowsTable([1, 2, 3, 4], 'a'), {schema: SCHEMA});
        await table.delete('id = 2');
        await table.delete('id = 2');  // a new call: a new id, runs (deletes nothing)
        await table.update({values: {tag: 'z'}, where: 'id = 3'});
        assert.equal(await table.countRows(), 3);
        assert.equal(await table.countRows('tag = \'z\''), 1);
      });
});

describe('graceful shutdown', () => {
  let server;
  after(async () => {
    if (server) await server.cleanup();
  });

  test(
      'SIGTERM during sustained concurrent inserts: exit 0, every acknowledged row present after restart',
      async () => {
        server = await startServer({extraArgs: ['--shutdown-timeout-s', '20']});
        const db = await lancedb.connect('db://default', {apiKey: 'x', hostOverride: server.url});
        await db.createEmptyTable('load', SCHEMA);

        const CLIENTS = 6;
        const BATCH = 20;
        const acked = new Set();
        const sent = new Set();
        let ackedRequests = 0;
        let stopping = false;
        let nextBatch = 0;
        const url = server.url;

        async function client(c) {
          while (true) {
            const b = nextBatch++;
            const ids = Array.from({length: BATCH}, (_, i) => b * BATCH + i);
            for (const id of ids) sent.add(id);
            let res;
            try {
              res = await fetch(`${url}/v1/table/load/insert/`, {
                method: 'POST',
                headers: {'content-type': 'application/json'},
                body: JSON.stringify(ids.map((id) => ({id, tag: `c${c}`}))),
              });
              await res.text();
            } catch {
              return;  // the server stopped accepting: this batch is unacknowledged
            }
            if (res.status === 200) {
              for (const id of ids) acked.add(id);
              ackedRequests++;
            } else if (stopping) {
              return;
            } else {
              throw new Error(`insert failed with ${res.status}`);
            }
          }
        }

        const loops = Array.from({length: CLIENTS}, (_, c) => client(c));
        // Sustained load for a while before the signal.
        while (ackedRequests < 150) await new Promise((r) => setTimeout(r, 10));
        stopping = true;
        const t0 = Date.now();
        const exit = await server.stop(25000);
        const stopMs = Date.now() - t0;
        await Promise.all(loops);
        assert.deepEqual(exit, {code: 0, signal: null}, server.logTail());
        assert.match(server.stderr, /stopped: in-flight requests drained/);
        assert.ok(acked.size >= 150 * BATCH);

        await server.start();
        const db2 = await lancedb.connect('db://default', {apiKey: 'x', hostOverride: server.url});
        const ids = await idsOf(db2, 'load');
        const present = new Set(ids);
        assert.equal(present.size, ids.length, 'no duplicate rows');
        const missing = [...acked].filter((id) => !present.has(id));
        assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged rows missing`);
        for (const id of ids) assert.ok(sent.has(id), `row ${id} was never sent`);
        // Unacknowledged batches are whole or absent (one insert = one WAL entry).
        assert.equal(ids.length % BATCH, 0);
        const table = await db2.openTable('load');
        assert.equal(await table.countRows(), ids.length);
        console.log(
            `shutdown: ${acked.size} acknowledged rows (${ackedRequests} inserts from ${
                CLIENTS} clients), ` +
                `${ids.length} present after restart, SIGTERM to exit ${stopMs} ms`,
        );
      });
});
