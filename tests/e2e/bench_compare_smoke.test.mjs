// Smoke test of `make bench-compare` (issue 7, Tests): a small comparison (5,000 Fashion-MNIST
// training vectors, 100 test queries, --quick) of Strata against LanceDB OSS local through
// bench/compare/main.mjs as a child process, then checks results.json: both systems ran the
// ingest and vector workloads, every recorded figure is a finite positive number, and Strata's
// indexed search at its default ef with 1 client reaches recall@10 >= 0.9 against exact ground
// truth (a repeated id counts once, so duplicate rows from the tier merge lower it; the server
// seals 1,000-row MemTables so the table spans several SSTables). The search-while-writing
// workload runs at its --quick size (20,000 synthetic 128-d rows): both systems report finite
// positive figures and Strata's read-after-write (add one row, then a k = 1 search for its
// exact vector) never misses the row just written. The ivfpq workload (IVF_PQ against IVF_PQ
// with LanceDB's parameters) builds on both systems: Strata's base index reports the
// num_partitions / num_sub_vectors / num_bits it was sent, both systems answer every query point
// at 1 and 8 clients, and Strata reaches recall@10 >= 0.9 with refine_factor 10. The filtered
// workload (20,000 clustered rows, five filters) gives every filter a finite positive q/s on both
// systems, and Strata returns only rows that pass the filter with recall@10 >= 0.9 at each.
// Timings are reported, never asserted.
//
// Env: STRATA_BIN = the strata binary; the exact ground truth comes from
// dirname(STRATA_BIN)/knn_ground_truth (built by the same build as strata).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, strataBin } from "./lib/server.mjs";

const TRAIN = 5000;
const QUERIES = 100;

function run(cmd, args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

// Every number in `section` (recursively) except the ones that may legitimately be 0 or absent.
function checkFigures(where, obj, zeroOk) {
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === "number") {
      assert.ok(Number.isFinite(v), `${where}.${k} = ${v} is not finite`);
      if (zeroOk.has(k)) assert.ok(v >= 0, `${where}.${k} = ${v} is negative`);
      else assert.ok(v > 0, `${where}.${k} = ${v} is not positive`);
    } else if (v && typeof v === "object") {
      checkFigures(`${where}.${k}`, v, zeroOk);
    }
  }
}

test("bench-compare --quick: both systems ingest and search; Strata recall@10 >= 0.9", { timeout: 10 * 60 * 1000 }, async (t) => {
  const bin = strataBin();
  const gtTool = path.join(path.dirname(bin), "knn_ground_truth");
  assert.ok(fs.existsSync(gtTool),
    `exact ground truth tool missing: ${gtTool} (build the knn_ground_truth target next to ${bin})`);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-compare-smoke-"));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));

  const t0 = performance.now();
  const r = await run(process.execPath, [path.join(REPO_ROOT, "bench/compare/main.mjs"), "--strata", bin,
    "--quick", "--train", String(TRAIN), "--queries", String(QUERIES), "--no-report", "--out", out,
    // 1,000-row MemTables: the 5,000 rows span several SSTables, so the tier merge is exercised.
    "--server-args", "--max-memtable-rows 1000"], 9 * 60 * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const tail = r.out.length > 6000 ? "..." + r.out.slice(-6000) : r.out;
  assert.equal(r.code, 0, `main.mjs exited with ${r.code} (signal ${r.signal}):\n${tail}`);
  t.diagnostic(`bench-compare --quick took ${seconds.toFixed(1)} s`);

  const res = JSON.parse(fs.readFileSync(path.join(out, "results.json"), "utf8"));
  assert.equal(res.meta.params.train, TRAIN);
  assert.equal(res.meta.params.queries, QUERIES);
  assert.deepEqual(res.meta.params.strata_server_args, ["--max-memtable-rows", "1000"]);
  assert.deepEqual(res.meta.completed, ["ingest", "vector", "ivfpq", "freshness", "fts", "flush", "sww", "filtered"]);

  for (const system of ["strata", "lancedb"]) {
    const ing = res.ingest.filter((e) => e.system === system);
    assert.deepEqual([...new Set(ing.map((e) => e.batch))].sort((a, b) => a - b), [1, 100, 1000], `${system} ingest batches`);
    for (const e of ing) assert.ok(e.rows > 0 && e.rows <= TRAIN, `${system} batch ${e.batch}: rows ${e.rows}`);
    const vec = res.vector.filter((e) => e.system === system);
    assert.ok(vec.length >= 2, `${system}: ${vec.length} vector points`);
    assert.deepEqual([...new Set(vec.map((e) => e.clients))].sort((a, b) => a - b), [1, 8], `${system} client counts`);
    for (const e of vec) assert.equal(e.queries, QUERIES);
  }
  // index_seconds (Strata's waitForIndex: ~0 when the index is maintained) and counters may be 0.
  const zeroOk = new Set(["index_seconds", "writer_errors", "not_visible", "load_avg_start", "load_avg_end",
    "mean_top10_overlap", "identical_top10_fraction", "raw_misses", "load_avg_1m"]);
  for (const section of ["ingest", "vector", "freshness", "flush"]) {
    for (const [i, e] of (res[section] ?? []).entries()) checkFigures(`${section}[${i}]`, e, zeroOk);
  }
  if (res.fts) {
    for (const part of ["build", "runs"]) for (const [i, e] of (res.fts[part] ?? []).entries()) checkFigures(`fts.${part}[${i}]`, e, zeroOk);
  }

  // Search while writing: one quick size point per system, every figure finite and positive
  // (the miss examples are checked through raw_misses), the writer wrote, and Strata's
  // read-after-write found every row it had just written.
  assert.deepEqual(res.sww.params.sizes, [20000]);
  for (const system of ["strata", "lancedb"]) {
    const runs = res.sww.runs.filter((e) => e.system === system);
    assert.equal(runs.length, 1, `sww ${system}: ${runs.length} size points`);
    for (const { raw_miss_examples: _ex, ...e } of runs) {
      checkFigures(`sww.${system}`, e, zeroOk);
      assert.ok(e.table_rows >= e.rows, `sww ${system}: ${e.table_rows} rows in the table, want >= ${e.rows}`);
      assert.ok(e.writer_rows > 0, `sww ${system}: the writer added no rows`);
      assert.ok(e.rss_start_kib > 0 && e.rss_end_kib > 0, `sww ${system}: RSS ${e.rss_start_kib} / ${e.rss_end_kib}`);
      t.diagnostic(`sww ${system}: idle p50 ${e.idle_p50_ms.toFixed(2)} ms, writing p50 ${e.writing_p50_ms.toFixed(2)} ms, ` +
        `read-after-write p50 ${e.raw_p50_ms.toFixed(2)} / p99 ${e.raw_p99_ms.toFixed(2)} ms, ${e.raw_misses} misses`);
    }
  }
  for (const e of res.sww.summary) checkFigures(`sww.summary.${e.system}`, e, zeroOk);
  const swwStrata = res.sww.runs.find((e) => e.system === "strata");
  assert.equal(swwStrata.raw_misses, 0,
    `Strata read-after-write missed ${swwStrata.raw_misses} of ${swwStrata.raw_pairs} rows just written: ` +
    JSON.stringify(swwStrata.raw_miss_examples));

  // IVF_PQ against IVF_PQ: both built over every row; Strata honoured LanceDB's parameters.
  const ivf = res.ivfpq;
  for (const system of ["strata", "lancedb"]) {
    const b = ivf.build.find((e) => e.system === system);
    assert.ok(b, `ivfpq: no ${system} build`);
    checkFigures(`ivfpq.build.${system}`, b, zeroOk);
    assert.ok(b.build_seconds > 0 && b.index_bytes > 0, `ivfpq ${system}: build ${b.build_seconds} s, ${b.index_bytes} bytes`);
    const pts = ivf.points.filter((e) => e.system === system);
    assert.deepEqual([...new Set(pts.map((e) => e.clients))].sort((a, b) => a - b), [1, 8], `ivfpq ${system} client counts`);
    for (const [i, e] of pts.entries()) {
      checkFigures(`ivfpq.${system}[${i}]`, e, zeroOk);
      assert.equal(e.queries, QUERIES);
      assert.ok(e.recall_at_10 <= 1, `ivfpq ${system} ${e.label}: recall ${e.recall_at_10} > 1`);
    }
    t.diagnostic(`ivfpq ${system}: build ${b.build_seconds.toFixed(2)} s, ${pts.map((e) => `${e.label} c=${e.clients} ` +
      `recall ${e.recall_at_10.toFixed(3)}`).join(", ")}`);
  }
  const sb = ivf.build.find((e) => e.system === "strata");
  const lb = ivf.build.find((e) => e.system === "lancedb");
  assert.equal(sb.indexed_rows, TRAIN);
  assert.deepEqual([sb.num_partitions, sb.num_sub_vectors, sb.num_bits], [lb.num_partitions, lb.num_sub_vectors, lb.num_bits],
    "Strata's base IVF_PQ parameters differ from LanceDB's");
  assert.deepEqual(sb.params_honoured, { num_partitions: true, num_sub_vectors: true, num_bits: true });
  assert.deepEqual(ivf.points.filter((e) => e.system === "strata").map((e) => `${e.label} ${e.clients}`),
    ivf.points.filter((e) => e.system === "lancedb").map((e) => `${e.label} ${e.clients}`), "ivfpq: different query points");
  const refined = ivf.points.filter((e) => e.system === "strata" && e.params.refine_factor === 10 && e.clients === 1);
  assert.ok(refined.length > 0, "ivfpq: no Strata refine_factor 10 point");
  for (const e of refined) assert.ok(e.recall_at_10 >= 0.9, `Strata IVF_PQ ${e.label}: recall@10 ${e.recall_at_10}`);

  const strataDefault = res.vector.find((e) => e.system === "strata" && e.clients === 1 && e.label === "default");
  assert.ok(strataDefault, "no Strata default-ef point with 1 client");
  assert.ok(strataDefault.recall_at_10 >= 0.9, `Strata recall@10 at default ef: ${strataDefault.recall_at_10}`);
  for (const e of res.vector) {
    assert.ok(e.recall_at_10 <= 1, `${e.system} ${e.label}: recall ${e.recall_at_10} > 1`);
  }
  t.diagnostic(`strata default ef: recall@10 ${strataDefault.recall_at_10}, ${strataDefault.qps.toFixed(0)} q/s`);

  // Filtered vector search: the five filters on both systems.
  assert.equal(res.filtered.params.rows, 20000);
  for (const system of ["strata", "lancedb"]) {
    const pts = res.filtered.points.filter((e) => e.system === system);
    assert.deepEqual(pts.map((e) => e.filter), ["none", "tag < 500", "tag < 100", "tag < 10", "tag = 7"], `filtered ${system} filters`);
    for (const e of pts) {
      checkFigures(`filtered.${system}.${e.filter}`, e, new Set(["filter_violations", "short_answers"]));
      assert.ok(e.recall_at_10 <= 1, `filtered ${system} ${e.filter}: recall ${e.recall_at_10} > 1`);
      if (system === "strata") {
        assert.equal(e.filter_violations, 0, `filtered strata ${e.filter}: ${e.filter_violations} rows fail the filter`);
        assert.ok(e.recall_at_10 >= 0.9, `filtered strata ${e.filter}: recall@10 ${e.recall_at_10}`);
      }
    }
    t.diagnostic(`filtered ${system}: ${pts.map((e) => `${e.filter} ${e.qps.toFixed(0)} q/s recall ${e.recall_at_10.toFixed(3)}`).join(", ")}`);
  }
});
