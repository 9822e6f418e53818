// Data files on S3 are read through local copies (issue 17, io/fetched_file.h): a table opened
// from the bucket copies its SSTables' and base fragments' data files with ranged GETs to
// --cache-dir/strata-fetch-{pid}/ and maps them under --cache-bytes. Checks, through the LanceDB
// client and /metrics: the copies exist while the table is open and the answers are right; a
// clean stop removes the directory; a kill -9 leaves it and the next start removes it. Runs in
// `make test-s3` (STRATA_E2E_STORE=s3); skipped elsewhere.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer } from "./lib/server.mjs";
import { loadClients } from "../../scripts/lib/datasets.mjs";

const enabled = process.env.STRATA_E2E_STORE === "s3";
const DIM = 8;
const ROWS = 3000;

function metric(text, name) {
  const m = text.match(new RegExp(`^${name} (\\S+)$`, "m"));
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

test("S3 data files are copied to --cache-dir, mapped, and removed with the server", { skip: !enabled && "needs make test-s3 (STRATA_E2E_STORE=s3)", timeout: 120000 }, async (t) => {
  const { lancedb, arrow } = loadClients();
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "strata-fetch-e2e-"));
  const server = await startServer({ extraArgs: ["--cache-dir", cacheDir] });
  t.after(async () => {
    await server.cleanup();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });
  const fetchDirs = () => fs.readdirSync(cacheDir).filter((d) => d.startsWith("strata-fetch-"));
  const schema = new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("vector", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
  const rows = Array.from({ length: ROWS }, (_, i) => ({ id: i, vector: Array.from({ length: DIM }, (_, j) => i + j / 10) }));
  let db = await lancedb.connect("db://fetch", { apiKey: "k", hostOverride: server.url });
  let table = await db.createEmptyTable("docs", schema);
  await table.add(rows.slice(0, ROWS / 2));
  for (const route of ["flush/", "compact/"]) {
    const r = await fetch(`${server.url}/v1/table/docs/${route}`, { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-lancedb-database": "fetch" } });
    assert.equal(r.status, 200, `${route}: ${await r.text()}`);
  }
  await table.add(rows.slice(ROWS / 2));
  const f = await fetch(`${server.url}/v1/table/docs/flush/`, { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-lancedb-database": "fetch" } });
  assert.equal(f.status, 200);

  // Reopened from the bucket: the base fragment and the SSTable come through local copies.
  await server.restart();
  db = await lancedb.connect("db://fetch", { apiKey: "k", hostOverride: server.url });
  table = await db.openTable("docs");
  assert.equal(await table.countRows(), ROWS);
  const hits = await table.query().nearestTo(rows[1234].vector).limit(3).toArray();
  assert.equal(Number(hits[0].id), 1234);
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const files = metric(text, "strata_cache_fetched_files");
  assert.ok(files >= 2, `fetched files ${files} (a base fragment and an SSTable)`);
  assert.ok(metric(text, "strata_cache_fetched_bytes") > ROWS * DIM * 4 * 0.9);
  assert.ok(metric(text, "strata_cache_ranged_gets_total") >= files);
  assert.ok(metric(text, "strata_cache_mapped_bytes") >= metric(text, "strata_cache_fetched_bytes"));
  const dirs = fetchDirs();
  assert.equal(dirs.length, 1, `one directory for the running server: ${dirs}`);
  assert.equal(fs.readdirSync(path.join(cacheDir, dirs[0])).length, files);

  // kill -9 leaves the copies; the next start removes the dead server's directory.
  await server.kill9();
  assert.deepEqual(fetchDirs(), dirs);
  await server.start();
  db = await lancedb.connect("db://fetch", { apiKey: "k", hostOverride: server.url });
  assert.equal(await (await db.openTable("docs")).countRows(), ROWS);
  const after = fetchDirs();
  assert.equal(after.length, 1);
  assert.notEqual(after[0], dirs[0]);
  // A clean stop removes the running server's directory.
  await server.stop();
  assert.deepEqual(fetchDirs(), []);
});
