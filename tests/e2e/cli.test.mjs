// End-to-end: the `strata` command-line client (issue 18, README "Command-line client") against
// a real server started with an API key. Every format is imported and then counted exactly
// through the REST API: CSV, JSON Lines, Arrow IPC file and stream, .npy (several dtypes and
// both header versions), .fvecs and .bvecs with generated ids (values read back exactly, bad
// headers and rows refused, a SIGKILLed 100k-row import resumed); a 100k-row CSV (time and
// rate reported); an import stopped by the --stop-after-batches hook, one stopped by SIGINT and
// one killed with SIGKILL, and one that died just after the server acknowledged a batch (into a
// table without a primary key: the re-sent batch is answered by the server's x-request-id
// dedupe), all finished with --resume to exactly the file's rows; a malformed CSV row rejected
// with its file:line and nothing of its batch committed; status/describe/flush/compact/query
// --json parsed; --version; an unknown subcommand; wrong key and unreachable server exit codes.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as arrow from "apache-arrow";
import { startServer, strataBin } from "./lib/server.mjs";

const KEY = "cli-test-key";
const DB = "clidb";

/** Runs `strata ARGS` in `cwd`; resolves {code, signal, stdout, stderr, ms}. */
function runCli(args, { cwd, env = {}, onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(strataBin(), args, {
      cwd,
      env: { ...process.env, STRATA_API_KEY: KEY, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 }));
    if (onSpawn) onSpawn(child);
  });
}

function show(r) {
  return `exit ${r.code} signal ${r.signal}\n--- stdout ---\n${r.stdout.slice(-3000)}\n--- stderr ---\n${r.stderr.slice(-3000)}`;
}

describe("strata CLI", () => {
  let server;
  let dir;
  const cli = (args, opts = {}) => runCli(args, { cwd: dir, ...opts });
  const common = () => ["--url", server.url, "--db", DB];

  async function rest(table, op, body) {
    const headers = { "x-lancedb-database": DB, "x-api-key": KEY, "content-type": "application/json" };
    const res = await fetch(`${server.url}/v1/table/${table}/${op}`, {
      method: "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${op}: ${text}`);
    return JSON.parse(text);
  }
  const count = (table, predicate) => rest(table, "count_rows/", predicate ? { predicate } : {});
  const fieldTypes = async (table) =>
    Object.fromEntries((await rest(table, "describe/")).schema.fields.map((f) => [f.name, f.type]));

  function writeCsv(name, n, { from = 0, bad = null } = {}) {
    const lines = ["id,label,score,flag,vector"];
    for (let i = from; i < from + n; i++) {
      const id = bad && bad.row === i ? bad.value : String(i);
      const v = [i % 7, (i * 3) % 5, 0.5, -i / 1000].map((x) => Number(x.toFixed(3)));
      lines.push(`${id},"name ${i}, ""q""",${(i / 4).toFixed(2)},${i % 2 === 0},"${JSON.stringify(v)}"`);
    }
    const p = path.join(dir, name);
    fs.writeFileSync(p, lines.join("\n") + "\n");
    return p;
  }

  /** onSpawn hook: sends `signal` once the state file records at least `rows` rows. */
  function signalAtRows(statePath, rows, signal) {
    return (child) => {
      const timer = setInterval(() => {
        try {
          if (JSON.parse(fs.readFileSync(statePath, "utf8")).files[0].rows >= rows) {
            clearInterval(timer);
            child.kill(signal);
          }
        } catch {
          // not written yet
        }
      }, 5);
      child.on("exit", () => clearInterval(timer));
    };
  }
  // A .npy file (NumPy format 1.0 or 2.0) of `rows` x `dim` values given by value(i, j), in
  // dtype descr ('<f4', '>f8', '|u1', '<i2', ...), written as numpy.save would.
  function writeNpy(name, rows, dim, descr, value, { version = 1, shape = `(${rows}, ${dim})`, fortran = "False", extraBytes = 0 } = {}) {
    const size = Number(descr.slice(2));
    const big = descr[0] === ">";
    const pre = version === 1 ? 10 : 12;
    let header = `{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': ${shape}, }`;
    header += " ".repeat(64 - ((pre + header.length + 1) % 64)) + "\n";
    const data = Buffer.alloc(rows * dim * size + extraBytes);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < dim; j++) {
        const at = (i * dim + j) * size;
        const v = value(i, j);
        const kind = descr[1] + size;
        if (kind === "f4") big ? data.writeFloatBE(v, at) : data.writeFloatLE(v, at);
        else if (kind === "f8") big ? data.writeDoubleBE(v, at) : data.writeDoubleLE(v, at);
        else if (kind === "u1") data.writeUInt8(v, at);
        else if (kind === "i2") big ? data.writeInt16BE(v, at) : data.writeInt16LE(v, at);
        else throw new Error(`writeNpy: ${descr}`);
      }
    }
    const lead = Buffer.alloc(pre);
    lead.write("\x93NUMPY", 0, "latin1");
    lead[6] = version;
    lead[7] = 0;
    if (version === 1) lead.writeUInt16LE(header.length, 8);
    else lead.writeUInt32LE(header.length, 8);
    const p = path.join(dir, name);
    fs.writeFileSync(p, Buffer.concat([lead, Buffer.from(header, "latin1"), data]));
    return p;
  }
  // .fvecs (float32) or .bvecs (uint8): per row an int32 dimension, then the values.
  function writeVecs(name, rows, dim, value, { bytes = false, dimOf = () => dim } = {}) {
    const parts = [];
    for (let i = 0; i < rows; i++) {
      const d = dimOf(i);
      const b = Buffer.alloc(4 + d * (bytes ? 1 : 4));
      b.writeInt32LE(d, 0);
      for (let j = 0; j < d; j++) {
        if (bytes) b.writeUInt8(value(i, j), 4 + j);
        else b.writeFloatLE(value(i, j), 4 + j * 4);
      }
      parts.push(b);
    }
    const p = path.join(dir, name);
    fs.writeFileSync(p, Buffer.concat(parts));
    return p;
  }
  async function vectorOf(table, id) {
    const q = await cli(["query", ...common(), "--table", table, "--filter", `id = ${id}`, "-k", "1", "--format", "json"]);
    assert.equal(q.code, 0, show(q));
    const rows = JSON.parse(q.stdout);
    assert.equal(rows.length, 1, q.stdout);
    // float32 values print with their shortest float32 digits: compare as float32.
    return rows[0].vector.map(Math.fround);
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "strata-cli-"));
    server = await startServer({ extraArgs: ["--api-key", KEY] });
  });
  after(async () => {
    if (server) await server.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("--version and unknown subcommand", async () => {
    const v = await cli(["--version"]);
    assert.equal(v.code, 0, show(v));
    assert.match(v.stdout, /^strata \d+\.\d+\.\d+/);
    const u = await cli(["frobnicate", "--x"]);
    assert.equal(u.code, 1, show(u));
    assert.match(u.stderr, /unknown subcommand frobnicate/);
    const missing = await cli(["import", ...common()]);
    assert.equal(missing.code, 1, show(missing));
  });

  test("CSV: inferred schema, quoted fields, exact count and values", async () => {
    const file = writeCsv("items.csv", 250);
    const r = await cli(["import", ...common(), "--table", "csv_t", "--batch-rows", "100", "--json", file]);
    assert.equal(r.code, 0, show(r));
    const s = JSON.parse(r.stdout);
    assert.equal(s.rows_imported, 250);
    assert.equal(s.batches, 3);
    assert.equal(s.created, true);
    assert.equal(s.complete, true);
    assert.equal(await count("csv_t"), 250);
    const t = await fieldTypes("csv_t");
    assert.deepEqual(
      [t.id.type, t.label.type, t.score.type, t.flag.type, t.vector.type, t.vector.length, t.vector.fields[0].type.type],
      ["int64", "string", "double", "bool", "fixed_size_list", 4, "float"],
    );
    const q = await cli(["query", ...common(), "--table", "csv_t", "--filter", "id = 7", "--json"]);
    assert.equal(q.code, 0, show(q));
    const rows = JSON.parse(q.stdout);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].label, 'name 7, "q"');
    assert.equal(rows[0].score, 1.75);
    assert.equal(rows[0].flag, false);
    assert.deepEqual(rows[0].vector.map((x) => Number(x.toFixed(3))), [0, 1, 0.5, -0.007]);
    // Appending the same file again goes under the existing schema.
    const again = await cli(["import", ...common(), "--table", "csv_t", "--json", file]);
    assert.equal(again.code, 0, show(again));
    assert.equal(JSON.parse(again.stdout).created, false);
    assert.equal(await count("csv_t"), 500);
  });

  test("JSON Lines: inferred schema, exact count", async () => {
    const p = path.join(dir, "rows.jsonl");
    const lines = [];
    for (let i = 0; i < 300; i++) {
      lines.push(JSON.stringify({ id: i, name: `n${i}`, w: i + 0.5, ok: i % 3 === 0, emb: [i, 1, 2] }));
      if (i === 10) lines.push("");
    }
    fs.writeFileSync(p, lines.join("\n") + "\n");
    const r = await cli(["import", ...common(), "--table", "jsonl_t", "--batch-rows", "128", "--json", p]);
    assert.equal(r.code, 0, show(r));
    assert.equal(JSON.parse(r.stdout).rows_imported, 300);
    assert.equal(await count("jsonl_t"), 300);
    assert.equal(await count("jsonl_t", "ok = true"), 100);
    const t = await fieldTypes("jsonl_t");
    assert.deepEqual([t.id.type, t.name.type, t.w.type, t.ok.type, t.emb.type, t.emb.length], [
      "int64", "string", "double", "bool", "fixed_size_list", 3,
    ]);
  });

  test("JSON Lines with mixed values in a column: inferred utf8, numbers and booleans kept as their text", async () => {
    const p = path.join(dir, "mixed.jsonl");
    fs.writeFileSync(p, '{"id": 1, "zip": "02134", "flag": true}\n{"id": 2, "zip": 90210, "flag": "yes"}\n');
    const r = await cli(["import", ...common(), "--table", "mixed_t", p]);
    assert.equal(r.code, 0, show(r));
    const t = await fieldTypes("mixed_t");
    assert.deepEqual([t.id.type, t.zip.type, t.flag.type], ["int64", "string", "string"]);
    assert.equal(await count("mixed_t", "zip = '90210' AND flag = 'yes'"), 1);
    assert.equal(await count("mixed_t", "zip = '02134' AND flag = 'true'"), 1);
    // query --json keeps the requested column order; --json reports an early error as JSON.
    const q = await cli(["query", ...common(), "--table", "mixed_t", "--columns", "zip,id", "--filter", "id = 2", "--json"]);
    assert.equal(q.code, 0, show(q));
    assert.equal(q.stdout.trim(), '[{"zip":"90210","id":2}]');
    const missing = await cli(["import", ...common(), "--table", "mixed_t", "--json", path.join(dir, "nope.csv")]);
    assert.equal(missing.code, 4, show(missing));
    assert.match(JSON.parse(missing.stdout).error, /nope\.csv/);
  });

  test("Arrow IPC file and stream: schema from the file, exact count", async () => {
    const make = (from, n) =>
      arrow.tableFromArrays({
        id: BigInt64Array.from({ length: n }, (_, i) => BigInt(from + i)),
        label: arrow.vectorFromArray(
          Array.from({ length: n }, (_, i) => `a${from + i}`),
          new arrow.Utf8(),
        ),
        x: Float32Array.from({ length: n }, (_, i) => i / 2),
      });
    const fileP = path.join(dir, "a.arrow");
    const streamP = path.join(dir, "b.arrows");
    fs.writeFileSync(fileP, arrow.tableToIPC(make(0, 700), "file"));
    fs.writeFileSync(streamP, arrow.tableToIPC(make(700, 450), "stream"));
    const r = await cli(["import", ...common(), "--table", "arrow_t", "--batch-rows", "200", "--json", fileP, streamP]);
    assert.equal(r.code, 0, show(r));
    const s = JSON.parse(r.stdout);
    assert.equal(s.rows_imported, 1150);
    assert.equal(s.batches, 4 + 3);
    assert.deepEqual(s.files.map((f) => [f.format, f.rows_imported]), [["arrow", 700], ["arrow", 450]]);
    assert.equal(await count("arrow_t"), 1150);
    assert.equal(await count("arrow_t", "id >= 700"), 450);
    const t = await fieldTypes("arrow_t");
    assert.deepEqual([t.id.type, t.label.type, t.x.type], ["int64", "string", "float"]);
    // --batch-bytes cuts Arrow files too, by the file's bytes per row: a quarter of the file
    // per batch gives at least 4 batches (and at most 5: the rows per batch round down).
    const quarter = Math.floor(fs.statSync(fileP).size / 4);
    const b = await cli(["import", ...common(), "--table", "arrow_bytes_t", "--batch-bytes", String(quarter), "--json", fileP]);
    assert.equal(b.code, 0, show(b));
    const sb = JSON.parse(b.stdout);
    assert.ok(sb.batches >= 4 && sb.batches <= 5, `batches: ${sb.batches}`);
    assert.equal(await count("arrow_bytes_t"), 700);
  });

  test("query prints dates and timestamps as text that import reads back", async () => {
    const schemaFile = path.join(dir, "dates_schema.json");
    const f = (name, type) => ({ name, nullable: true, type: { type } });
    fs.writeFileSync(schemaFile, JSON.stringify({ fields: [f("id", "int64"), f("d", "date32:day"), f("t", "timestamp:us:UTC")] }));
    const fileP = path.join(dir, "dates.jsonl");
    fs.writeFileSync(fileP, '{"id": 1, "d": "2024-01-31", "t": "2024-01-31T12:00:00.000005Z"}\n' +
      '{"id": 2, "d": "1969-12-31", "t": "1970-01-01T00:00:00Z"}\n');
    const r = await cli(["import", ...common(), "--table", "dates_t", "--schema", schemaFile, fileP]);
    assert.equal(r.code, 0, show(r));
    const q = await cli(["query", ...common(), "--table", "dates_t", "--filter", "id = 1", "--json"]);
    assert.equal(q.code, 0, show(q));
    assert.deepEqual(JSON.parse(q.stdout), [{ id: 1, d: "2024-01-31", t: "2024-01-31 12:00:00.000005" }]);
    const csv = await cli(["query", ...common(), "--table", "dates_t", "--filter", "id = 2", "--format", "csv"]);
    assert.equal(csv.code, 0, show(csv));
    assert.equal(csv.stdout.trim(), "id,d,t\n2,1969-12-31,1970-01-01 00:00:00");
    // The CSV output imports back into the same table.
    const back = path.join(dir, "dates_back.csv");
    fs.writeFileSync(back, csv.stdout.replace("2,", "3,"));
    const r2 = await cli(["import", ...common(), "--table", "dates_t", back]);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(await count("dates_t", "d = date '1969-12-31'"), 2);
  });

  test("100k-row CSV with progress", async (ctx) => {
    const file = writeCsv("big.csv", 100000);
    const r = await cli(["import", ...common(), "--table", "big_t", file]);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /imported 100000 rows into clidb\/big_t/);
    assert.equal(await count("big_t"), 100000);
    if (r.ms > 1500) assert.match(r.stderr, /progress: \d+ rows, \d+ rows\/s/, show(r));
    ctx.diagnostic(`100k-row CSV (${(fs.statSync(file).size / 1e6).toFixed(1)} MB): ${r.ms.toFixed(0)} ms, ${r.stdout.trim()}`);
  });

  test("stopped import resumed with --resume: exactly the file's rows", async () => {
    const file = writeCsv("resume.csv", 10000);
    const base = ["import", ...common(), "--table", "resume_t", "--batch-rows", "1000"];
    const r1 = await cli([...base, "--stop-after-batches", "3", "--json", file]);
    assert.equal(r1.code, 5, show(r1));
    assert.equal(JSON.parse(r1.stdout).rows_imported, 3000);
    assert.equal(await count("resume_t"), 3000);
    const state = JSON.parse(fs.readFileSync(path.join(dir, ".strata-import-clidb-resume_t.json"), "utf8"));
    assert.equal(state.files[0].rows, 3000);
    assert.equal(state.files[0].line, 3002);
    // Without --resume the CLI refuses to start over (duplicates).
    const refused = await cli([...base, file]);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /--resume/);
    const r2 = await cli([...base, "--resume", "--json", file]);
    assert.equal(r2.code, 0, show(r2));
    const s2 = JSON.parse(r2.stdout);
    assert.equal(s2.rows_skipped, 3000);
    assert.equal(s2.rows_imported, 7000);
    assert.equal(await count("resume_t"), 10000);
    assert.equal(await count("resume_t", "id < 3000"), 3000);
    assert.equal(await count("resume_t", "id >= 3000 AND id < 4000"), 1000);
    assert.equal(fs.existsSync(path.join(dir, ".strata-import-clidb-resume_t.json")), false);
  });

  test("import killed with SIGKILL mid-way, resumed: exactly the file's rows (primary key)", async () => {
    const N = 60000;
    const file = writeCsv("killed.csv", N);
    const statePath = path.join(dir, "killed.state.json");
    const base = ["import", ...common(), "--table", "kill_t", "--primary-key", "id", "--batch-rows", "500",
      "--state-file", statePath];
    const r1 = await cli([...base, file], { onSpawn: signalAtRows(statePath, 5000, "SIGKILL") });
    assert.equal(r1.signal, "SIGKILL", `the import finished before it was killed: ${show(r1)}`);
    const acked = JSON.parse(fs.readFileSync(statePath, "utf8")).files[0].rows;
    const before = await count("kill_t");
    assert.ok(before >= acked && before < N, `rows after the kill: ${before}, acknowledged ${acked}`);
    const r2 = await cli([...base, "--resume", "--json", file]);
    assert.equal(r2.code, 0, show(r2));
    // The batch in flight at the kill may have committed: re-sent, the server answers it from
    // its dedupe, and it counts as imported before.
    const skipped = JSON.parse(r2.stdout).rows_skipped;
    assert.ok(skipped === acked || skipped === acked + 500, `rows_skipped ${skipped}, acknowledged ${acked}`);
    assert.equal(await count("kill_t"), N);
  });

  test("a batch acknowledged but not recorded when the import died is not imported twice (no primary key)", async () => {
    const N = 5000;
    const file = writeCsv("acked.csv", N);
    const statePath = path.join(dir, "acked.state.json");
    const base = ["import", ...common(), "--table", "acked_t", "--state-file", statePath];
    // Dies with exit 137 once the server acknowledged batch 4, before the state file records it.
    const r1 = await cli([...base, "--batch-rows", "500", "--crash-after-batches", "4", file]);
    assert.equal(r1.code, 137, show(r1));
    const state = JSON.parse(fs.readFileSync(statePath, "utf8"));
    assert.equal(state.files[0].rows, 1500);
    assert.match(state.import_id, /^[0-9a-f]{32}$/);
    assert.equal(state.batch_rows, 500);
    assert.equal(await count("acked_t"), 2000);
    // Other batch sizes would re-send other rows under the batch's id: refused.
    const other = await cli([...base, "--resume", "--batch-rows", "400", file]);
    assert.equal(other.code, 1, show(other));
    assert.match(other.stderr, /records an import with --batch-rows 500, not 400/);
    const r2 = await cli([...base, "--resume", "--json", file]);
    assert.equal(r2.code, 0, show(r2));
    const s2 = JSON.parse(r2.stdout);
    // The re-sent batch 4 was answered from the dedupe: counted as imported before.
    assert.equal(s2.rows_skipped, 2000);
    assert.equal(s2.rows_imported, 3000);
    assert.equal(await count("acked_t"), N);
    assert.equal(await count("acked_t", "id >= 1500 AND id < 2000"), 500);
    assert.equal(fs.existsSync(statePath), false);
  });

  test("an import killed in its first batch, or before its second file, is not started again without --resume", async () => {
    const one = writeCsv("first_batch.csv", 100);
    const two = writeCsv("second_file.csv", 10, { from: 1000 });
    const statePath = path.join(dir, "first_batch.state.json");
    const base = ["import", ...common(), "--table", "first_batch_t", "--state-file", statePath];
    // Acknowledged, then dead before the state file recorded a row of any file.
    const r1 = await cli([...base, "--crash-after-batches", "1", one, two]);
    assert.equal(r1.code, 137, show(r1));
    assert.equal(await count("first_batch_t"), 100);
    const again = await cli([...base, one, two]);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /pass --resume/);
    assert.equal(await count("first_batch_t"), 100);
    const r2 = await cli([...base, "--resume", "--json", one, two]);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(await count("first_batch_t"), 110);
    // --resume without a state file says it starts a new import.
    const fresh = await cli(["import", ...common(), "--table", "fresh_resume_t", "--resume", two]);
    assert.equal(fresh.code, 0, show(fresh));
    assert.match(fresh.stderr, /nothing to resume, starting a new import/);
    // ... and it is a new import: vector files into a table with rows still need --id-start.
    const v1 = writeNpy("fresh_a.npy", 10, 4, "<f4", (i, j) => i + j);
    const v2 = writeNpy("fresh_b.npy", 10, 4, "<f4", (i, j) => -i - j);
    assert.equal((await cli(["import", ...common(), "--table", "fresh_vec_t", v1])).code, 0);
    const noStart = await cli(["import", ...common(), "--table", "fresh_vec_t", "--resume", v2]);
    assert.equal(noStart.code, 1, show(noStart));
    assert.match(noStart.stderr, /pass --id-start/);
    assert.equal(await count("fresh_vec_t"), 10);
  });

  test("vector files resumed in another order than the first run are refused", async () => {
    const a = writeNpy("order_a.npy", 100, 4, "<f4", (i, j) => i + j / 10);
    const b = writeVecs("order_b.fvecs", 100, 4, (i, j) => -i - j / 10);
    const statePath = path.join(dir, "order.state.json");
    const base = ["import", ...common(), "--table", "order_t", "--batch-rows", "100", "--state-file", statePath];
    const r1 = await cli([...base, "--stop-after-batches", "1", a, b]);
    assert.equal(r1.code, 5, show(r1));
    const swapped = await cli([...base, "--resume", b, a]);
    assert.equal(swapped.code, 1, show(swapped));
    assert.match(swapped.stderr, /list the vector files as the first run did/);
    assert.equal(await count("order_t"), 100);
    const r2 = await cli([...base, "--resume", a, b]);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(await count("order_t"), 200);
    assert.equal(await count("order_t", "id >= 100"), 100);
  });

  test("a text file fixed and shortened before --resume continues after its acknowledged records", async () => {
    const p = path.join(dir, "fixme.csv");
    fs.writeFileSync(p, "id,label,w\n1,a,1.0\n2,b,2.0\n3,c,3.0\n4,d\n5,e,5.0\n");
    const statePath = path.join(dir, "fixme.state.json");
    const base = ["import", ...common(), "--table", "fixme_t", "--batch-rows", "2", "--state-file", statePath];
    // The table exists first (inference would refuse the file before anything is sent).
    const seed = path.join(dir, "fixme_seed.csv");
    fs.writeFileSync(seed, "id,label,w\n0,z,0.5\n");
    assert.equal((await cli(["import", ...common(), "--table", "fixme_t", seed])).code, 0);
    const r1 = await cli([...base, p]);
    assert.equal(r1.code, 4, show(r1));
    assert.match(r1.stderr, /fixme\.csv:5: 2 fields, the header has 3/);
    assert.equal(await count("fixme_t"), 3);
    // Row 4 fixed, and row 1 shortened: the recorded byte offset now falls mid-record.
    fs.writeFileSync(p, "id,label,w\n1,a,1\n2,b,2.0\n3,c,3.0\n4,d,4.0\n5,e,5.0\n");
    const r2 = await cli([...base, "--resume", p]);
    assert.equal(r2.code, 0, show(r2));
    assert.match(r2.stderr, /changed since the state file was written; resuming after its first 2 rows/);
    assert.equal(await count("fixme_t"), 6);
    assert.equal(await count("fixme_t", "id >= 3"), 3);
    assert.equal(await count("fixme_t", "id = 2"), 1);
  });

  test("a second import with the same state file is refused while the first runs", async () => {
    const file = writeCsv("conc.csv", 20000);
    const statePath = path.join(dir, "conc.state.json");
    const base = ["import", ...common(), "--table", "conc_t", "--batch-rows", "200", "--state-file", statePath];
    let second = null;
    const first = await cli([...base, file], {
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (second || !fs.existsSync(statePath)) return;
          clearInterval(timer);
          second = cli([...base, file]);
        }, 2);
        child.on("exit", () => clearInterval(timer));
      },
    });
    assert.equal(first.code, 0, show(first));
    assert.ok(second, "the first import ended before the second started");
    const r2 = await second;
    assert.equal(r2.code, 1, show(r2));
    assert.match(r2.stderr, /another import with the state file .* is running/);
    assert.equal(await count("conc_t"), 20000);
    assert.equal(fs.existsSync(statePath), false);
    assert.equal(fs.existsSync(statePath + ".lock"), false);
  });

  test("an import whose first batch is refused leaves no state file", async () => {
    const short = path.join(dir, "first_bad.csv");
    fs.writeFileSync(short, "id,label\n1,a\n2\n");
    const statePath = path.join(dir, "first_bad.state.json");
    const r = await cli(["import", ...common(), "--table", "first_bad_t", "--state-file", statePath, short]);
    assert.equal(r.code, 4, show(r));
    assert.equal(fs.existsSync(statePath), false);
  });

  test("Ctrl-C (SIGINT) stops after the batch in flight with exit 5; --resume finishes", async () => {
    const N = 40000;
    const file = writeCsv("sigint.csv", N);
    const statePath = path.join(dir, "sigint.state.json");
    const base = ["import", ...common(), "--table", "sigint_t", "--batch-rows", "500", "--state-file", statePath];
    const r1 = await cli([...base, "--json", file], { onSpawn: signalAtRows(statePath, 2000, "SIGINT") });
    assert.equal(r1.code, 5, show(r1));
    assert.match(r1.stderr, /stopped \(interrupted\)/);
    const s1 = JSON.parse(r1.stdout);
    const acked = JSON.parse(fs.readFileSync(statePath, "utf8")).files[0].rows;
    assert.equal(s1.rows_imported, acked);
    assert.equal(await count("sigint_t"), acked);
    const r2 = await cli([...base, "--resume", "--json", file]);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(await count("sigint_t"), N);
  });

  test("a malformed CSV row fails with file:line, nothing of its batch committed", async () => {
    // Data row 34 is on line 36 (the header is line 1); batches of 20 rows: rows 0-19 commit, rows 20-39 do not.
    // (--schema: the bad value would otherwise make the inferred id column a string.)
    const file = writeCsv("bad.csv", 50, { bad: { row: 34, value: "12x" } });
    const schemaFile = path.join(dir, "bad_schema.json");
    const f = (name, type, extra = {}) => ({ name, nullable: true, type: { type, ...extra } });
    const item = f("item", "float");
    fs.writeFileSync(schemaFile, JSON.stringify({
      fields: [f("id", "int64"), f("label", "string"), f("score", "double"), f("flag", "bool"),
        f("vector", "fixed_size_list", { length: 4, fields: [item] })],
    }));
    const r = await cli(["import", ...common(), "--table", "bad_t", "--batch-rows", "20", "--schema", schemaFile, file]);
    assert.equal(r.code, 4, show(r));
    assert.match(r.stderr, /bad\.csv:36: column 'id': '12x' is not an integer/);
    assert.equal(await count("bad_t"), 20);
    // A row with a missing field, and a JSON Lines line that is not JSON.
    const short = path.join(dir, "short.csv");
    fs.writeFileSync(short, "id,label\n1,a\n2\n");
    const r2 = await cli(["import", ...common(), "--table", "bad_t2", short]);
    assert.equal(r2.code, 4, show(r2));
    assert.match(r2.stderr, /short\.csv:3: 1 fields, the header has 2/);
    const jl = path.join(dir, "bad.jsonl");
    fs.writeFileSync(jl, '{"id": 1}\n{"id": 2}\n{"id": \n');
    const r3 = await cli(["import", ...common(), "--table", "bad_t3", jl]);
    assert.equal(r3.code, 4, show(r3));
    assert.match(r3.stderr, /bad\.jsonl:3: not valid JSON/);
  });

  test("vector files: .npy (f4, big-endian f8 v2.0, u1), .fvecs, .bvecs with generated ids", async () => {
    const val = (i, j) => ((i * 7 + j) % 13) / 4;
    const f4 = writeNpy("v.npy", 1500, 8, "<f4", val);
    const r = await cli(["import", ...common(), "--table", "npy_t", "--batch-rows", "400", "--json", f4]);
    assert.equal(r.code, 0, show(r));
    const s = JSON.parse(r.stdout);
    assert.deepEqual([s.rows_imported, s.batches, s.files[0].format], [1500, 4, "npy"]);
    assert.equal(await count("npy_t"), 1500);
    assert.equal(await count("npy_t", "id >= 0 AND id < 1500"), 1500);
    const t = await fieldTypes("npy_t");
    assert.deepEqual([t.id.type, t.vector.type, t.vector.length], ["int64", "fixed_size_list", 8]);
    assert.deepEqual(await vectorOf("npy_t", 1234), Array.from({ length: 8 }, (_, j) => val(1234, j)));
    // The generated id is the table's primary key: describe says so.
    const d = await rest("npy_t", "describe/");
    assert.equal(d.schema.fields[0].metadata["lance-schema:unenforced-primary-key"], "true");

    // Appending more vectors needs --id-start (ids from 0 would replace rows); with it, ids run on
    // across the files: a big-endian float64 .npy (format 2.0), then a uint8 .npy.
    const f8 = writeNpy("w.npy", 300, 8, ">f8", (i, j) => -val(i, j) - 0.5, { version: 2 });
    const u1 = writeNpy("x.npy", 200, 8, "|u1", (i, j) => (i + j) % 256);
    const refused = await cli(["import", ...common(), "--table", "npy_t", f8]);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /already has 1500 rows: pass --id-start/);
    assert.equal(await count("npy_t"), 1500);
    const r2 = await cli(["import", ...common(), "--table", "npy_t", "--id-start", "1500", "-q", f8, u1]);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(await count("npy_t"), 2000);
    assert.deepEqual(await vectorOf("npy_t", 1500 + 17), Array.from({ length: 8 }, (_, j) => Math.fround(-val(17, j) - 0.5)));
    assert.deepEqual(await vectorOf("npy_t", 1800 + 199), Array.from({ length: 8 }, (_, j) => (199 + j) % 256));

    const fv = writeVecs("s.fvecs", 700, 16, (i, j) => i - j / 8);
    const bv = writeVecs("s.bvecs", 500, 16, (i, j) => (3 * i + j) % 256, { bytes: true });
    const r3 = await cli(["import", ...common(), "--table", "vecs_t", "--vector-column", "emb", "--id-column", "key", "--json", fv, bv]);
    assert.equal(r3.code, 0, show(r3));
    assert.deepEqual(JSON.parse(r3.stdout).files.map((f) => [f.format, f.rows_imported]), [["fvecs", 700], ["bvecs", 500]]);
    assert.equal(await count("vecs_t"), 1200);
    assert.equal(await count("vecs_t", "key >= 700"), 500);
    const q = await cli(["query", ...common(), "--table", "vecs_t", "--filter", "key = 701", "-k", "1", "--format", "json"]);
    assert.equal(q.code, 0, show(q));
    assert.deepEqual(JSON.parse(q.stdout)[0].emb, Array.from({ length: 16 }, (_, j) => (3 + j) % 256));
  });

  test("vector files: bad headers and rows are refused naming the file and the row; nothing sent", async () => {
    const cases = [
      [writeNpy("fort.npy", 10, 4, "<f4", () => 1, { fortran: "True" }), /Fortran order/],
      [writeNpy("cube.npy", 2, 4, "<f4", () => 1, { shape: "(2, 2, 2)" }), /shape \(2, 2, 2\) is not 2-D/],
      [writeNpy("cut.npy", 10, 4, "<f4", () => 1, { extraBytes: 3 }), /needs \d+ bytes, the file has \d+/],
      [writeNpy("i16.npy", 10, 4, "<i2", () => 1, { shape: "(10, 0)" }), /dimension 0 is outside \[1, 65536\]/],
      [writeVecs("ragged.fvecs", 5, 4, () => 1, { dimOf: (i) => (i === 3 ? 5 : 4) }), /not a whole number of 20-byte rows/],
      [writeVecs("ragged2.fvecs", 6, 4, () => 1, { dimOf: (i) => (i === 2 ? 3 : i === 4 ? 5 : 4) }), /row 2 has dimension 3, the file's first row 4/],
    ];
    for (const [file, re] of cases) {
      const r = await cli(["import", ...common(), "--table", "bad_v", file]);
      assert.equal(r.code, 4, `${file}: ${show(r)}`);
      assert.match(r.stderr, re, `${file}: ${show(r)}`);
      assert.ok(r.stderr.includes(path.basename(file)), r.stderr);
    }
    // A NaN in row 250: the batches before it are committed, nothing of its batch.
    const nan = writeNpy("nan.npy", 400, 4, "<f4", (i, j) => (i === 250 && j === 2 ? NaN : i));
    const r = await cli(["import", ...common(), "--table", "nan_t", "--batch-rows", "100", nan]);
    assert.equal(r.code, 4, show(r));
    assert.match(r.stderr, /nan\.npy: row 250, element 2 is NaN/);
    assert.equal(await count("nan_t"), 200);
  });

  test("vector import killed with SIGKILL mid-way, resumed: exactly the file's rows and ids", async () => {
    const N = 100000;
    const file = writeNpy("kill.npy", N, 32, "<f4", (i, j) => (i % 1000) + j / 64);
    const statePath = path.join(dir, "kill_v.state.json");
    const base = ["import", ...common(), "--table", "kill_v", "--id-start", "7", "--batch-rows", "2000", "--state-file", statePath];
    const r1 = await cli([...base, file], { onSpawn: signalAtRows(statePath, 20000, "SIGKILL") });
    assert.equal(r1.signal, "SIGKILL", `the import finished before it was killed: ${show(r1)}`);
    const st = JSON.parse(fs.readFileSync(statePath, "utf8"));
    assert.equal(st.id_start, 7);
    // A different --id-start on --resume would give other ids: refused.
    const wrong = await cli([...base.map((a) => (a === "7" ? "8" : a)), "--resume", file]);
    assert.equal(wrong.code, 1, show(wrong));
    assert.match(wrong.stderr, /records an import with --id-start 7, not 8/);
    const r2 = await cli([...base, "--resume", "--json", file]);
    assert.equal(r2.code, 0, show(r2));
    const skipped = JSON.parse(r2.stdout).rows_skipped;  // + the batch in flight if it committed
    assert.ok(skipped === st.files[0].rows || skipped === st.files[0].rows + 2000, `rows_skipped ${skipped}`);
    assert.equal(await count("kill_v"), N);
    assert.equal(await count("kill_v", `id >= 7 AND id < ${N + 7}`), N);
    assert.deepEqual(await vectorOf("kill_v", 7 + 54321), Array.from({ length: 32 }, (_, j) => Math.fround(321 + j / 64)));
  });

  test("status, describe, flush, compact, query --json", async () => {
    const st = await cli(["status", ...common(), "--json"]);
    assert.equal(st.code, 0, show(st));
    const status = JSON.parse(st.stdout);
    assert.equal(status.healthy, true);
    const csvT = status.tables.find((t) => t.name === "csv_t");
    assert.equal(csvT.rows, 500);
    assert.ok(csvT.mem_wal.shards.length >= 1);
    const text = await cli(["status", ...common()]);
    assert.equal(text.code, 0, show(text));
    assert.match(text.stdout, /healthy/);
    assert.match(text.stdout, /L0 SSTABLES/);
    assert.match(text.stdout, /big_t\s+100000/);

    // A fresh table, so that its active MemTable holds rows for flush/ to seal.
    const ops = await cli(["import", ...common(), "--table", "ops_t", "-q", writeCsv("ops.csv", 20)]);
    assert.equal(ops.code, 0, show(ops));
    const fl = await cli(["flush", ...common(), "--table", "ops_t", "--json"]);
    assert.equal(fl.code, 0, show(fl));
    const flushed = JSON.parse(fl.stdout);
    const sealed = flushed.shards[0].sealed_generation;
    assert.ok(Number.isInteger(sealed), fl.stdout);
    const d = await cli(["describe", ...common(), "--table", "ops_t", "--json"]);
    assert.equal(d.code, 0, show(d));
    const desc = JSON.parse(d.stdout);
    assert.equal(desc.rows, 20);
    assert.ok(desc.mem_wal.shards[0].sstables.some((s) => s.generation === sealed), d.stdout);
    const flText = await cli(["flush", ...common(), "--table", "ops_t"]);
    assert.match(flText.stdout, /sealed generation (\d+|none)/);
    const dText = await cli(["describe", ...common(), "--table", "ops_t"]);
    assert.match(dText.stdout, /vector\s+fixed_size_list/);
    assert.match(dText.stdout, /SSTables \(L0, waiting for compaction\)/);

    const c = await cli(["compact", ...common(), "--table", "ops_t", "--json"]);
    assert.equal(c.code, 0, show(c));
    const compacted = JSON.parse(c.stdout);
    assert.ok(compacted.compacted_generations.includes(sealed), c.stdout);
    assert.equal(await count("ops_t"), 20);

    const q = await cli(["query", ...common(), "--table", "ops_t", "--vector", "[3, 4, 0.5, -0.003]", "-k", "2",
      "--columns", "id,label", "--format", "json"]);
    assert.equal(q.code, 0, show(q));
    const hits = JSON.parse(q.stdout);
    assert.equal(hits.length, 2);
    assert.equal(hits[0].id, 3);
    assert.ok(hits[0]._distance < 1e-6, q.stdout);
    const csv = await cli(["query", ...common(), "--table", "ops_t", "--filter", "id = 3", "-k", "1", "--format", "csv"]);
    assert.equal(csv.code, 0, show(csv));
    assert.equal(csv.stdout.split("\n")[0], "id,label,score,flag,vector");
    assert.match(csv.stdout.split("\n")[1], /^3,"name 3, ""q""",0.75,false,"\[3\.0,4\.0,0\.5,-0\.003\]"$/);
    const tbl = await cli(["query", ...common(), "--table", "ops_t", "--filter", "id = 3", "-k", "1"]);
    assert.match(tbl.stdout, /^3 +name 3, "q" +0\.75 +false +\[3, 4, 0\.5, -0\.003\]$/m);
    assert.match(tbl.stdout, /\(1 row\)/);
  });

  test("wrong key, missing table, unreachable server: exit codes", async () => {
    const bad = await cli(["status", ...common()], { env: { STRATA_API_KEY: "nope" } });
    assert.equal(bad.code, 3, show(bad));
    assert.match(bad.stderr, /401/);
    const missing = await cli(["describe", ...common(), "--table", "no_such_table"]);
    assert.equal(missing.code, 3, show(missing));
    assert.match(missing.stderr, /404/);
    const down = await cli(["status", "--url", "http://127.0.0.1:1"]);
    assert.equal(down.code, 2, show(down));
    assert.match(down.stderr, /cannot reach/);
  });
});
