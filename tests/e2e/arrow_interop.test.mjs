// Interop of Strata's Arrow IPC reader/writer (through strata_ipc_tool) with apache-arrow 18
// (JS) and the LanceDB Node client's create/ upload.
//
// Findings pinned by these tests: apache-arrow 18 JS reads and writes every type Strata
// carries except LargeList ("Unrecognized type: LargeList"); it neither writes nor reads
// compressed bodies ("Record batch compression not implemented"), so LZ4/ZSTD streams are
// produced by the C++ writer and the real LanceDB client, and read back by C++ only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import * as A from 'apache-arrow';
import {
  tableFromIPC, tableToIPC, Table, Type, Precision, DateUnit, TimeUnit, vectorFromArray,
  Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, Float32, Float64, Utf8,
  LargeUtf8, Binary, LargeBinary, FixedSizeBinary, Bool, DateDay, DateMillisecond, TimeSecond,
  TimeMillisecond, TimeMicrosecond, TimeNanosecond, TimestampMicrosecond, TimestampNanosecond,
  DurationMillisecond, List, FixedSizeList, Struct, Field, Null, RecordBatch,
} from 'apache-arrow';

const here = path.dirname(fileURLToPath(import.meta.url));
const TOOL = process.env.STRATA_IPC_TOOL ?? path.resolve(here, '../../build/release/strata_ipc_tool');
const work = mkdtempSync(path.join(tmpdir(), 'strata-interop-'));

function tool(...args) {
  return execFileSync(TOOL, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
}
const toolJson = (...args) => JSON.parse(tool(...args));

// --- canonical JSON of values, the same form as tests/arrow/ipc_test_util.h CellJson ---------
const hex = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('hex');
const utf8 = new TextDecoder();

function halfToNumber(h) {
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  let v;
  if (exp === 0) v = frac * 2 ** -24;
  else if (exp === 31) v = frac ? NaN : Infinity;
  else v = (frac + 1024) * 2 ** (exp - 25);
  return h & 0x8000 ? -v : v;
}

function isNull(data, i) {
  if (data.typeId === Type.Null) return true;
  if (!data.nullBitmap || data.nullBitmap.length === 0 || data.nullCount === 0) return false;
  const bit = data.offset + i;
  return (data.nullBitmap[bit >> 3] & (1 << (bit & 7))) === 0;
}

function cell(data, i) {
  if (isNull(data, i)) return null;
  const t = data.type;
  const j = data.offset + i;
  const v = data.values;
  switch (data.typeId) {
    case Type.Bool: return ((v[j >> 3] >> (j & 7)) & 1) === 1;
    case Type.Int: return t.bitWidth === 64 ? String(v[i]) : v[i];
    case Type.Float:
      return t.precision === Precision.HALF ? halfToNumber(v[i]) : v[i];
    case Type.Utf8: case Type.LargeUtf8: {
      const o = data.valueOffsets;
      return utf8.decode(v.subarray(Number(o[i]), Number(o[i + 1])));
    }
    case Type.Binary: case Type.LargeBinary: {
      const o = data.valueOffsets;
      return hex(v.subarray(Number(o[i]), Number(o[i + 1])));
    }
    case Type.FixedSizeBinary: return hex(v.subarray(i * t.byteWidth, (i + 1) * t.byteWidth));
    case Type.Decimal: return hex(new Uint8Array(v.buffer, v.byteOffset + i * 16, 16));
    case Type.Date: return t.unit === DateUnit.DAY ? v[i] : String(v[i]);
    case Type.Time: return t.bitWidth === 32 ? v[i] : String(v[i]);
    case Type.Timestamp: case Type.Duration: return String(v[i]);
    case Type.List: {
      const o = data.valueOffsets;
      const out = [];
      for (let k = Number(o[i]); k < Number(o[i + 1]); ++k) out.push(cell(data.children[0], k));
      return out;
    }
    case Type.FixedSizeList: {
      const out = [];
      for (let k = j * t.listSize; k < (j + 1) * t.listSize; ++k) out.push(cell(data.children[0], k));
      return out;
    }
    case Type.Struct: {
      const out = {};
      t.children.forEach((f, c) => { out[f.name] = cell(data.children[c], j); });
      return out;
    }
    default: throw new Error(`cell: unexpected type ${t}`);
  }
}

function dumpTable(table) {
  const batches = table.batches.map((b) => {
    const columns = {};
    table.schema.fields.forEach((f, c) => {
      const d = b.data.children[c];
      const vals = [];
      for (let i = 0; i < b.numRows; ++i) vals.push(cell(d, i));
      columns[f.name] = vals;
    });
    return { num_rows: b.numRows, columns };
  });
  return batches;
}

// --- C++ writes, JS reads ---------------------------------------------------------------------
const sampleDir = path.join(work, 'samples');
execFileSync('mkdir', ['-p', sampleDir]);

test('strata_ipc_tool exists', () => {
  assert.ok(existsSync(TOOL), `set STRATA_IPC_TOOL or build ${TOOL}`);
  tool('write-sample', sampleDir, '--exclude', 'large_list_utf8');
});

for (const name of ['stream.arrows', 'file.arrow', 'sliced.arrows', 'empty.arrows']) {
  test(`JS reads C++ ${name} with every type, nulls and empty batches`, () => {
    const expected = JSON.parse(readFileSync(path.join(sampleDir, `${name}.json`), 'utf8'));
    const table = tableFromIPC(readFileSync(path.join(sampleDir, name)));
    assert.deepEqual(table.schema.fields.map((f) => f.name), expected.schema.fields.map((f) => f.name));
    assert.equal(table.schema.metadata.get('origin'), 'strata-test');
    assert.equal(table.schema.fields[0].metadata.get('role'), 'primary');
    assert.equal(table.schema.fields[0].nullable, false);
    assert.equal(String(table.schema.fields.find((f) => f.name === 'ts_us_utc').type),
      'Timestamp<MICROSECOND, UTC>');
    if (name === 'empty.arrows') {
      // No record batches: JS synthesizes one 0-row batch.
      assert.deepEqual(expected.batches, []);
      assert.equal(table.numRows, 0);
    } else {
      assert.deepEqual(dumpTable(table), expected.batches);
      assert.ok(table.numRows > 0);
    }
  });
}

test('JS 18 cannot read compressed bodies; C++ reads its own LZ4 and ZSTD streams', () => {
  const expected = JSON.parse(readFileSync(path.join(sampleDir, 'stream.arrows.json'), 'utf8'));
  for (const name of ['lz4.arrows', 'zstd.arrows', 'lz4_file.arrow']) {
    assert.throws(() => tableFromIPC(readFileSync(path.join(sampleDir, name))),
      /compression not implemented/);
    assert.deepEqual(toolJson('read', path.join(sampleDir, name)), expected);
  }
  const msgs = toolJson('messages', path.join(sampleDir, 'zstd.arrows'));
  assert.equal(msgs[1].compression, 'ZSTD');
});

test('JS 18 does not know LargeList (so it is left out of the JS samples)', () => {
  const dir = path.join(work, 'full');
  execFileSync('mkdir', ['-p', dir]);
  tool('write-sample', dir);
  assert.throws(() => tableFromIPC(readFileSync(path.join(dir, 'stream.arrows'))), /LargeList/);
  // C++ reads the full sample, large_list included.
  const full = toolJson('read', path.join(dir, 'stream.arrows'));
  assert.ok(full.batches[0].columns.large_list_utf8.some((v) => Array.isArray(v) && v.length > 0));
});

// --- JS writes, C++ reads ---------------------------------------------------------------------
test('C++ reads JS-written streams and files of every type (re-written by JS)', () => {
  const expected = JSON.parse(readFileSync(path.join(sampleDir, 'stream.arrows.json'), 'utf8'));
  const table = tableFromIPC(readFileSync(path.join(sampleDir, 'stream.arrows')));
  for (const fmt of ['stream', 'file']) {
    const p = path.join(work, `js_rewrite.${fmt}`);
    writeFileSync(p, tableToIPC(table, fmt));
    const got = toolJson('read', p);
    assert.deepEqual(got.batches, expected.batches);
    assert.deepEqual(got.schema, expected.schema);
  }
});

function jsTable(rows, seed) {
  const n = (i) => (i + seed) % 4 === 1;  // null pattern
  const pick = (f) => Array.from({ length: rows }, (_, i) => (n(i) ? null : f(i + seed)));
  const vec = (vals, type) => vectorFromArray(vals, type);
  return new Table({
    nul: vec(Array(rows).fill(null), new Null()),
    b: vec(pick((i) => i % 3 === 0), new Bool()),
    i8: vec(pick((i) => i - 50), new Int8()),
    i16: vec(pick((i) => i * 300), new Int16()),
    i32: vec(pick((i) => i * 100000), new Int32()),
    i64: vec(pick((i) => BigInt(i) * 10000000000n - 5n), new Int64()),
    u8: vec(pick((i) => i + 200), new Uint8()),
    u16: vec(pick((i) => i * 1000), new Uint16()),
    u32: vec(pick((i) => i * 100000000), new Uint32()),
    u64: vec(pick((i) => BigInt(i) * 2n ** 60n + 1n), new Uint64()),
    f16: vec(pick((i) => i * 0.5), new Float16()),
    f32: vec(pick((i) => i * 0.25 - 1), new Float32()),
    f64: vec(pick((i) => i / 8 - 3), new Float64()),
    s: vec(pick((i) => `v${i}ü`), new Utf8()),
    ls: vec(pick((i) => 'x'.repeat(i % 5)), new LargeUtf8()),
    bin: vec(pick((i) => Uint8Array.from([i, i + 1, 255])), new Binary()),
    lbin: vec(pick((i) => Uint8Array.from([i * 3])), new LargeBinary()),
    fsb: vec(pick((i) => Uint8Array.from([i, 2, 3, 4])), new FixedSizeBinary(4)),
    d32: vec(pick((i) => new Date(Date.UTC(2020, 0, 1 + i))), new DateDay()),
    d64: vec(pick((i) => new Date(Date.UTC(2021, 5, 1 + i))), new DateMillisecond()),
    t32s: vec(pick((i) => i * 60), new TimeSecond()),
    t32ms: vec(pick((i) => i * 1000 + 1), new TimeMillisecond()),
    t64us: vec(pick((i) => BigInt(i) * 1000001n), new TimeMicrosecond()),
    t64ns: vec(pick((i) => BigInt(i) * 1000000001n), new TimeNanosecond()),
    tsus: vec(pick((i) => 1700000000000 + i), new TimestampMicrosecond('UTC')),
    tsns: vec(pick((i) => 1700000000000 + i * 2), new TimestampNanosecond()),
    dur: vec(pick((i) => BigInt(i) * 1000n), new DurationMillisecond()),
    li: vec(pick((i) => Array.from({ length: i % 3 }, (_, k) => i * 10 + k)),
      new List(new Field('item', new Int32(), true))),
    fsl: vec(pick((i) => [i, i + 0.5, -i]), new FixedSizeList(3, new Field('item', new Float32(), true))),
    st: vec(pick((i) => ({ a: i, b: `s${i}` })),
      new Struct([new Field('a', new Int16(), true), new Field('b', new Utf8(), true)])),
  });
}

test('C++ reads JS-built streams and files with nulls and 0-row batches; JS reads C++ rewrite', () => {
  const parts = [jsTable(7, 0), jsTable(0, 0), jsTable(3, 2)];
  // One schema for all parts (JS infers a Null column's nullability from its null count).
  const schema = parts[0].schema;
  const table = new Table(parts.flatMap((t) => t.batches.map((b) => new RecordBatch(schema, b.data))));
  assert.deepEqual(table.batches.map((b) => b.numRows), [7, 0, 3]);
  const expected = dumpTable(table);
  // Sanity: the JS dump has the values we put in.
  assert.equal(expected[0].columns.i64[0], '-5');
  assert.equal(expected[0].columns.i64[1], null);
  assert.deepEqual(expected[0].columns.fsl[2], [2, 2.5, -2]);
  for (const fmt of ['stream', 'file']) {
    const p = path.join(work, `js_built.${fmt}`);
    writeFileSync(p, tableToIPC(table, fmt));
    const got = toolJson('read', p);
    assert.deepEqual(got.batches, expected, fmt);
    // C++ rewrites (stream and file); JS reads the result back unchanged.
    for (const flag of [[], ['--file']]) {
      const out = path.join(work, `cpp_rewrite_${fmt}${flag.join('')}.arrow`);
      tool('roundtrip', p, out, ...flag);
      const back = tableFromIPC(readFileSync(out));
      assert.deepEqual(dumpTable(back), expected);
      assert.deepEqual(back.schema.fields.map((f) => String(f.type)),
        table.schema.fields.map((f) => String(f.type)));
    }
  }
});

// --- the LanceDB client's create/ upload --------------------------------------------------------
async function captureCreateBody(rows, schema) {
  const lancedb = await import('@lancedb/lancedb');
  const bodies = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const db = await lancedb.connect('db://interop', {
      apiKey: 'k', hostOverride: `http://127.0.0.1:${srv.address().port}`,
    });
    if (schema) await db.createEmptyTable('t1', schema);
    else await db.createTable('t1', rows);
  } finally {
    srv.close();
  }
  return bodies.find((b) => b.url.startsWith('/v1/table/t1/create/'));
}

test('C++ reads the LanceDB client create/ stream (schema, LZ4 batches, EOS) and the same plus a 0-row batch', async () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({
    id: i, text: i === 3 ? null : `row ${i}`, vector: [i, i + 0.5, -i, 2 * i],
  }));
  const cap = await captureCreateBody(rows);
  assert.ok(cap, 'the client sent create/');
  assert.equal(cap.headers['content-type'], 'application/vnd.apache.arrow.stream');
  const p = path.join(work, 'lancedb_create.arrows');
  writeFileSync(p, cap.body);
  const msgs = toolJson('messages', p);
  assert.equal(msgs[0].header, 'Schema');
  const batches = msgs.filter((m) => m.header === 'RecordBatch');
  assert.ok(batches.length >= 1);
  assert.ok(batches.filter((m) => m.length > 0).every((m) => m.compression === 'LZ4_FRAME'),
    JSON.stringify(msgs));
  assert.equal(batches.reduce((s, m) => s + m.length, 0), 5);
  assert.deepEqual(msgs.at(-1).eos, true);
  const got = toolJson('read', p);
  const fields = got.schema.fields.map((f) => [f.name, f.type]);
  assert.deepEqual(fields, [['id', 'float64'], ['text', 'utf8'],
    ['vector', 'fixed_size_list<item: float32>[4]']]);
  const col = (name) => got.batches.flatMap((b) => b.columns[name]);
  assert.deepEqual(col('id'), [0, 1, 2, 3, 4]);
  assert.deepEqual(col('text'), ['row 0', 'row 1', 'row 2', null, 'row 4']);
  assert.deepEqual(col('vector')[3], [3, 3.5, -3, 6]);
  // The same data written by Strata as schema, LZ4 batches, a 0-row batch, EOS reads the same.
  const ours = path.join(work, 'strata_create.arrows');
  tool('roundtrip', p, ours, '--lz4', '--append-empty');
  const ourMsgs = toolJson('messages', ours);
  assert.deepEqual(ourMsgs.map((m) => [m.header, m.length, m.compression]).slice(-2),
    [['RecordBatch', 0, 'LZ4_FRAME'], [undefined, undefined, undefined]]);
  assert.equal(ourMsgs.at(-1).eos, true);
  const back = toolJson('read', ours);
  assert.equal(back.batches.at(-1).num_rows, 0);
  assert.deepEqual(back.batches.flatMap((b) => b.columns.vector), col('vector'));
  report.lance = msgs;
});

test('C++ reads the LanceDB client createEmptyTable stream (schema, one 0-row batch, EOS)', async () => {
  const schema = new A.Schema([
    new Field('id', new Int64(), true),
    new Field('vector', new FixedSizeList(8, new Field('item', new Float32(), true)), true),
  ]);
  const cap = await captureCreateBody(null, schema);
  assert.ok(cap, 'the client sent create/');
  const p = path.join(work, 'lancedb_empty.arrows');
  writeFileSync(p, cap.body);
  const msgs = toolJson('messages', p);
  assert.deepEqual(msgs.map((m) => m.header ?? 'EOS'), ['Schema', 'RecordBatch', 'EOS']);
  assert.equal(msgs[1].length, 0);
  assert.equal(msgs[2].eos, true);
  const got = toolJson('read', p);
  assert.deepEqual(got.schema.fields.map((f) => f.type), ['int64', 'fixed_size_list<item: float32>[8]']);
  assert.deepEqual(got.batches, [{ num_rows: 0, columns: { id: [], vector: [] } }]);
  report.lanceEmpty = msgs;
});

const report = {};
test('report the LanceDB message layout', () => {
  if (report.lance) console.log('LanceDB create/ messages:', JSON.stringify(report.lance));
  if (report.lanceEmpty) console.log('LanceDB empty create/:', JSON.stringify(report.lanceEmpty));
});
