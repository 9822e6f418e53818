#!/usr/bin/env node
// `make bench-compare`: Strata (remote mode, `strata serve`) against LanceDB OSS local
// (@lancedb/lancedb 0.31.0, `connect(dir)`) on the same machine, data and client API, in one run
// (issue 7). Workloads, in order: ingest, vector (recall-QPS sweep, plus the in-process hnswlib
// reference `<buildDir>/hnswlib_sweep`), ivfpq (Strata IVF_PQ vs LanceDB IVF_PQ with the same
// parameters: build time, index size, recall@10 and q/s per nprobes / refine_factor; ivfpq.mjs;
// `--only ivfpq` runs it alone), freshness, fts (WordNet; fts.mjs), flush, sww (search
// while writing on synthetic clustered 128-d vectors at growing sizes; search_while_writing.mjs),
// filtered (filtered vector search at selectivities 100%, 50%, 10%, 1%, 0.1% on synthetic
// clustered 128-d rows with a BTree-indexed int32 tag, each system's prefilter; filtered.mjs).
// Writes DIR/results.json (read by report.mjs), prints the tables with Strata/LanceDB
// ratios, then runs report.mjs (markdown + charts) unless --no-report.
//
// Usage: node bench/compare/main.mjs --strata build/release/strata [--train 60000]
//          [--queries 1000] [--quick] [--only ingest,vector,ivfpq,freshness,fts,flush,sww,filtered]
//          [--out DIR] [--no-report] [--docs] [--single-rows N] [--flush-rate R] [--keep]
//          [--sww-rows 50000,500000,1000000] [--sww-queries Q] [--sww-budget S] [--filtered-rows N]
//   --strata      the strata binary; its directory is the build dir holding knn_ground_truth
//                 (exact ground truth, required for recall) and hnswlib_sweep (optional)
//   --tools DIR   where knn_ground_truth and hnswlib_sweep are (default: the strata binary's dir)
//   --train N     training rows loaded (default 60000, at most 60000)
//   --queries Q   test queries per sweep point (default 1000, at most 10000)
//   --quick       smaller sweeps and fewer freshness writes / flush calls (for the smoke test)
//   --out DIR     results directory (default build/bench-compare); ground truth is cached there
//   --docs        passed to report.mjs (writes docs/BENCHMARKS.md and docs/bench/*.png)
//   --single-rows N  rows written one per request in the batch-1 ingest (default 2000; quick 200)
//   --flush-rate R   the flush workload's writer target, rows/s (default 2000, same for both)
//   --flush-budget S no new flush/optimize call after S seconds of the phase (default 300)
//   --server-args "A B"  extra `strata serve` flags (e.g. "--max-memtable-rows 1000" for more tiers)
//   --sww-rows L   search-while-writing size points, comma-separated rows (default
//                  50000,500000,1000000; --quick 20000); one table per system grows through them
//   --sww-queries Q  searches per sww phase and read-after-write pairs (default 1000; quick 200)
//   --sww-budget S   each sww phase stops after S seconds even if short of Q (default 120; quick 5)
//   --filtered-rows N  rows of the filtered workload's table (default 200000; --quick 20000)
//   --keep        keep the temporary data directories (printed) instead of removing them
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REPO, loadClients, loadFashionMnist, groundTruth } from "../../scripts/lib/datasets.mjs";
import { openStrata, openLance } from "./systems.mjs";

// LanceDB's Rust logger: keep its per-query deprecation warnings (a select() without
// `_distance`) out of the progress output.
process.env.LANCEDB_LOG ??= "error";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WORKLOADS = ["ingest", "vector", "ivfpq", "freshness", "fts", "flush", "sww", "filtered"];

function usage(msg) {
  if (!msg) {
    // --help: the option list is the header comment of this file.
    const src = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
    const head = [];
    for (const line of src) {
      if (line.startsWith("#!")) continue;
      if (!line.startsWith("//")) break;
      head.push(line.replace(/^\/\/ ?/, ""));
    }
    console.log(head.join("\n"));
    process.exit(0);
  }
  console.error(`error: ${msg}`);
  console.error("usage: node bench/compare/main.mjs --strata PATH [--train N] [--queries Q] [--quick] " +
    "[--only ingest,vector,ivfpq,freshness,fts,flush,sww,filtered] [--out DIR] [--no-report] [--docs] [--tools DIR] [--single-rows N] [--flush-rate ROWS_PER_S] [--flush-budget S] [--keep] " +
    "[--sww-rows N,N,...] [--sww-queries Q] [--sww-budget S] [--filtered-rows N]");
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    strataBin: path.join(REPO, "build/release/strata"),
    train: 60000,
    queries: 1000,
    quick: false,
    only: WORKLOADS,
    out: path.join(REPO, "build/bench-compare"),
    report: true,
    docs: false,
    keep: false,
    clients: [1, 8],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    const int = (v, lo, hi) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < lo || n > hi) usage(`${a} must be an integer in [${lo}, ${hi}], got ${v}`);
      return n;
    };
    if (a === "--strata") o.strataBin = val();
    else if (a === "--train") o.train = int(val(), 100, 60000);
    else if (a === "--queries") o.queries = int(val(), 1, 10000);
    else if (a === "--quick") o.quick = true;
    else if (a === "--server-args") o.serverArgs = val().split(/\s+/).filter(Boolean);
    else if (a === "--tools") o.buildDir = val();
    else if (a === "--only") {
      o.only = val().split(",").filter(Boolean);
      if (o.only.length === 0) usage(`--only needs at least one of ${WORKLOADS.join(",")}`);
      for (const w of o.only) if (!WORKLOADS.includes(w)) usage(`--only: unknown workload ${w} (${WORKLOADS.join(",")})`);
    } else if (a === "--out") o.out = val();
    else if (a === "--no-report") o.report = false;
    else if (a === "--docs") o.docs = true;
    else if (a === "--keep") o.keep = true;
    else if (a === "--single-rows") o.singleRows = int(val(), 1, 60000);
    else if (a === "--flush-rate") o.flushRate = int(val(), 100, 1000000);
    else if (a === "--flush-budget") o.flushBudgetSeconds = int(val(), 1, 86400);
    else if (a === "--sww-rows") {
      const list = val();
      o.swwRows = list.split(",").filter(Boolean).map((v) => int(v, 1000, 100000000));
      if (o.swwRows.length === 0) usage("--sww-rows needs at least one size");
    } else if (a === "--sww-queries") o.swwQueries = int(val(), 10, 100000);
    else if (a === "--sww-budget") o.swwBudgetSeconds = int(val(), 1, 86400);
    else if (a === "--filtered-rows") o.filteredRows = int(val(), 1000, 100000000);
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  o.strataBin = path.resolve(o.strataBin);
  if (!fs.existsSync(o.strataBin)) usage(`strata binary not found: ${o.strataBin}`);
  o.buildDir = path.resolve(o.buildDir ?? path.dirname(o.strataBin));
  o.out = path.resolve(o.out);
  return o;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model ?? "unknown",
    mem_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    load_avg_start: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function pkgVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(REPO, "tests/e2e/node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return "unknown";
  }
}

function strataVersion() {
  try {
    return execFileSync("git", ["-C", REPO, "describe", "--always", "--dirty", "--tags"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

// ------------------------------------------------------------------ printing
const fmt = (x, d = 0) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(d) : "-");

function table(title, head, rows) {
  const w = head.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => String(c).padStart(w[i])).join("  ");
  console.log(`\n${title}\n${line(head)}\n${w.map((n) => "-".repeat(n)).join("  ")}`);
  for (const r of rows) console.log(line(r));
}

/** Best queries/s among a system's points with recall@10 >= r at `clients`. */
export function bestQpsAtRecall(vector, system, clients, r, index = null) {
  let best = null;
  for (const e of vector) {
    if (e.system !== system || e.clients !== clients || e.recall_at_10 < r) continue;
    if (index && e.index !== index) continue;
    if (!best || e.qps > best.qps) best = e;
  }
  return best;
}

function printTables(res) {
  if (res.ingest?.length) {
    const rows = res.ingest.map((e) => [e.system, e.index, e.batch, e.rows, fmt(e.write_seconds, 2),
      fmt(e.index_seconds, 2), fmt(e.searchable_seconds, 2), fmt(e.rows_per_s), fmt(e.searchable_rows_per_s)]);
    table("ingest", ["system", "index", "batch", "rows", "write s", "index s", "searchable s", "rows/s", "searchable rows/s"], rows);
    const ratios = [];
    for (const b of [...new Set(res.ingest.map((e) => e.batch))]) {
      const s = res.ingest.find((e) => e.system === "strata" && e.batch === b);
      for (const l of res.ingest.filter((e) => e.system === "lancedb" && e.batch === b)) {
        if (s) ratios.push([b, l.index, fmt(s.rows_per_s / l.rows_per_s, 2), fmt(s.searchable_rows_per_s / l.searchable_rows_per_s, 2)]);
      }
    }
    table("ingest ratios Strata/LanceDB (>1: Strata faster)", ["batch", "vs LanceDB index", "rows/s", "searchable rows/s"], ratios);
  }
  if (res.vector?.length) {
    table("vector search (k=10)", ["system", "index", "params", "clients", "recall@10", "q/s", "p50 ms", "p99 ms"],
      res.vector.map((e) => [e.system, e.index, e.label, e.clients, fmt(e.recall_at_10, 4), fmt(e.qps), fmt(e.p50_ms, 2), fmt(e.p99_ms, 2)]));
    const rows = [];
    for (const c of [...new Set(res.vector.map((e) => e.clients))]) {
      for (const r of [0.8, 0.9, 0.95, 0.99]) {
        const s = bestQpsAtRecall(res.vector, "strata", c, r);
        const l = bestQpsAtRecall(res.vector, "lancedb", c, r);
        const h = bestQpsAtRecall(res.vector, "hnswlib", c, r);
        rows.push([c, r, s ? `${fmt(s.qps)} (${s.label})` : "-", l ? `${fmt(l.qps)} (${l.index} ${l.label})` : "-",
          h ? `${fmt(h.qps)} (${h.label})` : "-", s && l ? fmt(s.qps / l.qps, 2) : "-"]);
      }
    }
    table("best q/s at recall@10 >= r", ["clients", "r", "strata", "lancedb", "hnswlib", "strata/lancedb"], rows);
  }
  if (res.ivfpq?.points?.length) {
    const w = res.ivfpq;
    table("IVF_PQ build (createIndex -> the index covers every row)",
      ["system", "rows", "num_partitions", "num_sub_vectors", "num_bits", "compact s", "build s", "index bytes", "bytes are"],
      w.build.map((e) => [e.system, e.rows, e.num_partitions, e.num_sub_vectors, e.num_bits, fmt(e.compact_seconds, 2),
        fmt(e.build_seconds, 2), e.index_bytes ?? "-", e.index_bytes_kind]));
    const rows = [];
    for (const s of w.points.filter((e) => e.system === "strata")) {
      const l = w.points.find((e) => e.system === "lancedb" && e.label === s.label && e.clients === s.clients);
      rows.push([s.label, s.clients, fmt(s.recall_at_10, 4), l ? fmt(l.recall_at_10, 4) : "-", fmt(s.qps), l ? fmt(l.qps) : "-",
        l ? fmt(s.qps / l.qps, 2) : "-", fmt(s.p50_ms, 2), l ? fmt(l.p50_ms, 2) : "-"]);
    }
    table("IVF_PQ, same parameters (k=10)", ["params", "clients", "strata recall@10", "lancedb recall@10", "strata q/s",
      "lancedb q/s", "q/s strata/lancedb", "strata p50 ms", "lancedb p50 ms"], rows);
  }
  if (res.freshness?.length) {
    table("freshness: write ack -> visible to a vector search on a second connection",
      ["system", "writes", "p50 ms", "p99 ms", "max ms", "mean ms", "searches/write", "not visible"],
      res.freshness.map((e) => [e.system, e.writes, fmt(e.p50_ms, 2), fmt(e.p99_ms, 2), fmt(e.max_ms, 2), fmt(e.mean_ms, 2),
        fmt(e.polls_mean, 2), e.not_visible ?? 0]));
    const s = res.freshness.find((e) => e.system === "strata");
    const l = res.freshness.find((e) => e.system === "lancedb");
    if (s && l) console.log(`freshness ratio Strata/LanceDB (<1: Strata fresher): p50 ${fmt(s.p50_ms / l.p50_ms, 2)}, p99 ${fmt(s.p99_ms / l.p99_ms, 2)}`);
  }
  if (res.fts) {
    const f = res.fts;
    if (f.build) table("fts build", ["system", "load s", "index s"], f.build.map((e) => [e.system, fmt(e.load_seconds, 2), fmt(e.index_seconds, 2)]));
    if (f.runs) table("fts queries", ["system", "clients", "q/s", "p50 ms", "p99 ms"], f.runs.map((e) => [e.system, e.clients, fmt(e.qps), fmt(e.p50_ms, 2), fmt(e.p99_ms, 2)]));
    if (f.agreement) console.log(`fts top-10 agreement: mean overlap ${f.agreement.mean_top10_overlap}, identical ${f.agreement.identical_top10_fraction}`);
  }
  if (res.flush?.length) {
    table("flush (Strata flush/) vs optimize() (LanceDB) under a paced 1,000-row-batch writer",
      ["system", "op", "calls", "p50 ms", "p99 ms", "max ms", "writer rows/s", "writer errors"],
      res.flush.map((e) => [e.system, e.op, e.calls, fmt(e.p50_ms, 1), fmt(e.p99_ms, 1), fmt(e.max_ms, 1), fmt(e.writer_rows_per_s), e.writer_errors]));
    const s = res.flush.find((e) => e.system === "strata");
    const l = res.flush.find((e) => e.system === "lancedb");
    if (s && l) console.log(`flush ratio Strata/LanceDB: p50 latency ${fmt(s.p50_ms / l.p50_ms, 3)} (writers paced to the same target)`);
  }
  if (res.sww?.runs?.length) {
    const w = res.sww;
    for (const system of [...new Set(w.runs.map((e) => e.system))]) {
      const rs = w.runs.filter((e) => e.system === system);
      table(`search while writing: ${system} (ms; ${rs[0].rss_process} RSS; k=10, up to ${w.params.queries} queries per phase ` +
        `or ${w.params.budget_seconds} s, writer 1 row / ${w.params.write_interval_ms} ms)`,
        ["rows", "table rows", "idle p50", "idle p99", "writing q", "writing p50", "writing p99", "w/idle p50", "writer rows", "writer rows/s",
          "raw p50", "raw p99", "raw misses", "RSS start MiB", "RSS end MiB", "load"],
        rs.map((e) => [e.rows, e.table_rows, fmt(e.idle_p50_ms, 2), fmt(e.idle_p99_ms, 2), e.writing_queries, fmt(e.writing_p50_ms, 2),
          fmt(e.writing_p99_ms, 2), fmt(e.writing_over_idle_p50, 2), e.writer_rows, fmt(e.writer_rows_per_s),
          fmt(e.raw_p50_ms, 2), fmt(e.raw_p99_ms, 2), `${e.raw_misses}/${e.raw_pairs}`,
          fmt(e.rss_start_kib / 1024, 0), fmt(e.rss_end_kib / 1024, 0), fmt(e.load_avg_1m, 2)]));
    }
    table("search while writing: Strata's targets (ms; raw = read-after-write add + k=1 search)",
      ["system", "max writing/idle p50 (<= 1.5)", "max raw p99 ms (<= 5)", "raw p50 largest size / 50k or smallest (<= 1.5)", "raw misses"],
      (w.summary ?? []).map((e) => [e.system, fmt(e.max_writing_over_idle_p50, 2), fmt(e.max_raw_p99_ms, 2),
        e.raw_p50_growth === null ? "- (one size)" : `${fmt(e.raw_p50_growth, 2)} (${e.raw_p50_growth_rows.join(" -> ")})`,
        e.raw_misses]));
  }
  if (res.filtered?.points?.length) {
    const w = res.filtered;
    const rows = [];
    for (const s of w.points.filter((e) => e.system === "strata")) {
      const l = w.points.find((e) => e.system === "lancedb" && e.filter === s.filter);
      rows.push([s.filter, fmt(s.selectivity * 100, 1), fmt(s.qps), fmt(s.ratio_to_unfiltered, 2), fmt(s.recall_at_10, 3),
        fmt(s.p50_ms, 2), l ? fmt(l.qps) : "-", l ? fmt(l.ratio_to_unfiltered, 2) : "-", l ? fmt(l.recall_at_10, 3) : "-",
        l ? fmt(l.p50_ms, 2) : "-", l ? fmt(s.qps / l.qps, 2) : "-"]);
    }
    table(`filtered vector search (${w.params.rows} rows, ${w.params.queries} queries, k=${w.params.k}, prefilter, 1 client, ` +
      `median of ${w.params.passes} passes; ratio = q/s / the same system's unfiltered q/s)`,
      ["filter", "pass %", "strata q/s", "strata ratio", "strata recall@10", "strata p50 ms", "lancedb q/s", "lancedb ratio",
        "lancedb recall@10", "lancedb p50 ms", "q/s strata/lancedb"], rows);
    const bad = w.points.filter((e) => e.filter_violations || e.short_answers);
    for (const e of bad) console.log(`filtered ${e.system} ${e.filter}: ${e.filter_violations} rows failing the filter, ${e.short_answers} answers short of k`);
  }
}

// ------------------------------------------------------------------ main
async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  const log = (msg) => {
    const s = Math.floor((performance.now() - t0) / 1000);
    console.log(`[${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}] ${msg}`);
  };
  fs.mkdirSync(opts.out, { recursive: true });
  opts.workDir = fs.mkdtempSync(path.join(os.tmpdir(), "strata-bench-compare-"));
  const opened = [];
  let cleaned = false;
  const cleanupSync = () => {
    if (!cleaned && !opts.keep) fs.rmSync(opts.workDir, { recursive: true, force: true });
  };
  process.on("exit", cleanupSync); // server.mjs SIGKILLs the servers on exit / signals
  const cleanup = async () => {
    for (const s of opened.reverse()) {
      try {
        await s.close();
      } catch (e) {
        log(`cleanup ${s.system}: ${e.message}`);
      }
    }
    cleanupSync();
    cleaned = true;
    if (opts.keep) log(`kept ${opts.workDir}`);
  };

  const meta = {
    date: new Date().toISOString(),
    machine: machine(),
    versions: {
      strata: strataVersion(),
      lancedb: pkgVersion("@lancedb/lancedb"),
      apache_arrow: pkgVersion("apache-arrow"),
      node: process.version,
      hnswlib: "0.6.2",
    },
    params: {
      train: opts.train,
      queries: opts.queries,
      quick: opts.quick,
      clients: opts.clients,
      k: 10,
      workloads: opts.only,
      flush_writer_rows_per_s_target: opts.flushRate ?? 2000,
      flush_budget_seconds: opts.flushBudgetSeconds ?? 300,
      strata_server_args: opts.serverArgs ?? [],
      sww_rows: opts.swwRows ?? null,
      sww_queries: opts.swwQueries ?? null,
      sww_budget_seconds: opts.swwBudgetSeconds ?? null,
      filtered_rows: opts.filteredRows ?? null,
      strata_index: "Index.hnswSq({m: 16, efConstruction: 100}) before any row (HNSW maintained while writing)",
      lancedb_indexes: "Index.hnswSq() and Index.ivfPq() with the client's defaults, after loading",
    },
  };
  log(`bench-compare: train ${opts.train}, queries ${opts.queries}${opts.quick ? ", quick" : ""}, ` +
    `workloads ${opts.only.join(",")}; load ${meta.machine.load_avg_start.join(" ")} on ${meta.machine.cpus} cpus`);
  log(`work dir ${opts.workDir}, results in ${opts.out}`);

  const { lancedb, arrow } = loadClients();
  const ctx = {
    opts,
    lancedb,
    arrow,
    // Fashion-MNIST feeds ingest / vector / freshness / flush; fts, sww and filtered bring their own data.
    fashion: opts.only.some((w) => ["ingest", "vector", "ivfpq", "freshness", "flush"].includes(w)) ? loadFashionMnist() : null,
    gt: null,
    gtFile: null,
    state: {},
    log,
    async openStrata(name, extraArgs = []) {
      const s = await openStrata({ strataBin: opts.strataBin, dataDir: path.join(opts.workDir, name),
        extraArgs: [...(opts.serverArgs ?? []), ...extraArgs] });
      opened.push(s);
      return s;
    },
    async openLance(name) {
      const s = await openLance({ dir: path.join(opts.workDir, name) });
      opened.push(s);
      return s;
    },
  };
  const results = { meta, ingest: [], vector: [], ivfpq: null, freshness: [], fts: null, flush: [], sww: null, filtered: null };
  const file = path.join(opts.out, "results.json");
  // Written after every workload (and kept on failure), so a late error or Ctrl-C keeps what
  // was measured; meta.completed says which workloads finished.
  results.meta.completed = [];
  const checkpoint = (workload) => {
    results.meta.completed.push(workload);
    fs.writeFileSync(file, JSON.stringify(results, null, 1) + "\n");
  };

  if (opts.only.includes("fts")) {
    const { WORDNET_DIR } = await import("../../scripts/lib/datasets.mjs");
    if (!fs.existsSync(path.join(WORDNET_DIR, "data.noun"))) {
      throw new Error(`WordNet not found: ${WORDNET_DIR}/data.noun (Debian wordnet-base; run scripts/install-deps or set STRATA_WORDNET_DIR)`);
    }
  }
  try {
    const needGt = opts.only.includes("vector") || opts.only.includes("ivfpq");
    if (needGt) {
      const tool = path.join(opts.buildDir, "knn_ground_truth");
      ctx.gtFile = path.join(opts.out, `fmnist-gt-${opts.train}-${opts.queries}-10-all.json`);
      if (!fs.existsSync(ctx.gtFile) && !fs.existsSync(tool)) {
        throw new Error(`exact ground truth needs ${tool} (build it: cmake --build ${opts.buildDir} --target knn_ground_truth)`);
      }
      log(`ground truth (${opts.train} x ${opts.queries}, k=10) ${fs.existsSync(ctx.gtFile) ? "from cache" : "computing"}: ${ctx.gtFile}`);
      ctx.gt = groundTruth({ tool, cacheDir: opts.out, train: opts.train, queries: opts.queries, k: 10 });
    }
    if (opts.only.includes("ingest")) {
      const { run } = await import("./ingest.mjs");
      results.ingest = await run(ctx);
      checkpoint("ingest");
    }
    if (opts.only.includes("vector")) {
      const { run } = await import("./vector_sweep.mjs");
      const v = await run(ctx);
      results.vector = v.vector;
      if (v.hnswlib) results.meta.hnswlib_build = v.hnswlib;
      checkpoint("vector");
    }
    if (opts.only.includes("ivfpq")) {
      const { run } = await import("./ivfpq.mjs");
      results.ivfpq = await run(ctx);
      checkpoint("ivfpq");
    }
    if (opts.only.includes("freshness")) {
      const { run } = await import("./freshness.mjs");
      results.freshness = await run(ctx);
      checkpoint("freshness");
    }
    if (opts.only.includes("fts")) {
      const ftsPath = path.join(HERE, "fts.mjs");
      if (fs.existsSync(ftsPath)) {
        const { run } = await import(pathToFileURL(ftsPath).href);
        results.fts = await run(ctx);
      checkpoint("fts");
      } else {
        log(`WARNING: ${ftsPath} not found; skipping fts`);
      }
    }
    if (opts.only.includes("flush")) {
      const { run } = await import("./flush.mjs");
      results.flush = await run(ctx);
      checkpoint("flush");
    }
    if (opts.only.includes("sww")) {
      const { run } = await import("./search_while_writing.mjs");
      results.sww = await run(ctx);
      checkpoint("sww");
    }
    if (opts.only.includes("filtered")) {
      const { run } = await import("./filtered.mjs");
      results.filtered = await run(ctx);
      checkpoint("filtered");
    }
  } finally {
    await cleanup();
  }

  results.meta.wall_seconds = (performance.now() - t0) / 1000;
  results.meta.machine.load_avg_end = os.loadavg().map((x) => Math.round(x * 100) / 100);
  fs.writeFileSync(file, JSON.stringify(results, null, 1) + "\n");
  printTables(results);
  log(`wrote ${file} (wall ${results.meta.wall_seconds.toFixed(0)} s, load ${results.meta.machine.load_avg_end.join(" ")})`);

  if (opts.report) {
    const report = path.join(HERE, "report.mjs");
    if (!fs.existsSync(report)) {
      log(`WARNING: ${report} not found; no report`);
    } else {
      const args = [report, "--results", file];
      if (opts.docs) args.push("--docs");
      const r = spawnSync(process.execPath, args, { stdio: "inherit" });
      if (r.status !== 0) throw new Error(`report.mjs failed (status ${r.status})`);
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`bench-compare failed: ${e.stack || e.message}`);
    process.exit(1);
  });
}
