// Turns a `make bench-compare` results.json (bench/compare/main.mjs; layout in the header of
// main.mjs and docs/BENCHMARKS.md) into markdown tables and two gnuplot charts.
//
//   node bench/compare/report.mjs --results DIR/results.json [--docs]
//
// Without --docs: writes DIR/results.md, DIR/recall_qps.png and DIR/ingest.png.
// With --docs: also replaces the text between `<!-- results:begin -->` and `<!-- results:end -->`
// in docs/BENCHMARKS.md and writes docs/bench/recall_qps.png and docs/bench/ingest.png.
// Charts need gnuplot (Debian gnuplot-nox, pngcairo terminal); without it the tables are still
// written and a warning is printed.
//
// Ratios are always Strata / LanceDB: for throughputs (rows/s, QPS) > 1 means Strata is faster,
// for latencies (ms, s) < 1 means Strata is faster.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const BEGIN = "<!-- results:begin -->";
export const END = "<!-- results:end -->";
const RECALL_TARGETS = [0.9, 0.95, 0.99];

// ---------- formatting ----------

function fmt(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  if (typeof x !== "number") return String(x);
  if (digits !== undefined) return x.toFixed(digits);
  if (Number.isInteger(x)) return x.toLocaleString("en-US");
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString("en-US");
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

function ratio(a, b) {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return "–";
  const r = a / b;
  if (r > 0 && r < 0.01) return `${r.toExponential(1)}×`;
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

function table(header, rows) {
  const out = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const r of rows) out.push(`| ${r.map((c) => String(c).replace(/\|/g, "\\|")).join(" | ")} |`);
  return out.join("\n");
}

const notRun = (name) => `_${name}: not run in this run._`;

// ---------- sections ----------

function metaSection(meta = {}) {
  const m = meta.machine || {};
  const v = meta.versions || {};
  const p = meta.params || {};
  const lines = ["### Machine and versions", ""];
  lines.push(table(["", ""], [
    ["date", meta.date ?? "–"],
    ["CPU", `${m.cpu_model ?? "?"} (${m.cpus ?? "?"} logical CPUs)`],
    ["memory", m.mem_gib !== undefined ? `${fmt(m.mem_gib, 1)} GiB` : "–"],
    ["kernel", m.kernel ?? "–"],
    ["load average at start", Array.isArray(m.load_avg_start) ? m.load_avg_start.map((x) => fmt(x, 2)).join(" / ")
      : (m.load_avg_start ?? "–")],
    ["load average at end", Array.isArray(m.load_avg_end) ? m.load_avg_end.map((x) => fmt(x, 2)).join(" / ") : "–"],
    ["wall time of the run", meta.wall_seconds !== undefined ? `${fmt(meta.wall_seconds / 60, 1)} min` : "–"],
    ...Object.entries(v).map(([k, val]) => [k, val]),
  ]));
  const hb = meta.hnswlib_build;
  if (hb && hb.build_seconds !== undefined) {
    lines.push("", `hnswlib reference build (in-process, M=${hb.m}, ef_construction=${hb.ef_construction}, ` +
      `${fmt(hb.train)} rows): ${fmt(hb.build_seconds)} s, ${fmt(hb.build_rows_per_s)} rows/s.`);
  }
  if (Object.keys(p).length) {
    lines.push("", "Parameters: " + Object.entries(p)
      .map(([k, val]) => `\`${k}\`=${typeof val === "object" ? JSON.stringify(val) : val}`).join(", "));
  }
  return lines.join("\n");
}

function ingestSection(ingest) {
  if (!Array.isArray(ingest) || ingest.length === 0) return notRun("Ingest");
  const lines = ["### 1. Ingest", ""];
  lines.push(table(
    ["system", "index", "batch", "rows", "write s", "index s", "until searchable s", "rows/s", "searchable rows/s"],
    ingest.map((r) => [r.system, r.index ?? "–", fmt(r.batch), fmt(r.rows), fmt(r.write_seconds),
      fmt(r.index_seconds), fmt(r.searchable_seconds), fmt(r.rows_per_s), fmt(r.searchable_rows_per_s)])));
  const batches = [...new Set(ingest.map((r) => r.batch))].sort((a, b) => a - b);
  const ratioRows = [];
  for (const b of batches) {
    const s = ingest.filter((r) => r.system === "strata" && r.batch === b);
    const l = ingest.filter((r) => r.system === "lancedb" && r.batch === b);
    if (!s.length || !l.length) continue;
    const sBest = (key) => Math.max(...s.map((r) => r[key] ?? 0));
    for (const lr of l) {
      ratioRows.push([fmt(b), lr.index ?? "–", ratio(sBest("rows_per_s"), lr.rows_per_s),
        ratio(sBest("searchable_rows_per_s"), lr.searchable_rows_per_s)]);
    }
  }
  if (ratioRows.length) {
    lines.push("", "Strata / LanceDB (> 1: Strata ingests faster):", "");
    lines.push(table(["batch", "LanceDB index", "rows/s ratio", "searchable rows/s ratio"], ratioRows));
  }
  return lines.join("\n");
}

/** The vector rows, with an hnswlib sweep kept separately (results.hnswlib) folded in. */
export function vectorRows(results) {
  const rows = Array.isArray(results.vector) ? results.vector.slice() : [];
  const h = results.hnswlib;
  if (h && Array.isArray(h.points) && !rows.some((r) => r.system === "hnswlib")) {
    for (const p of h.points) {
      rows.push({ system: "hnswlib", index: `HNSW M=${h.m ?? "?"} efc=${h.ef_construction ?? "?"}`,
        params: { ef: p.ef }, label: `ef=${p.ef}`, clients: p.clients, queries: h.queries,
        recall_at_10: p.recall_at_10, qps: p.qps, p50_ms: p.p50_ms, p99_ms: p.p99_ms });
    }
  }
  return rows;
}

function seriesKey(r) {
  return `${r.system} ${r.index ?? ""} c=${r.clients}`.replace(/\s+/g, " ");
}

function vectorSection(results) {
  const rows = vectorRows(results);
  if (rows.length === 0) return notRun("Vector search");
  const lines = ["### 3. Vector search (recall@10 vs QPS)", ""];
  const sorted = rows.slice().sort((a, b) => a.system.localeCompare(b.system) ||
    String(a.index).localeCompare(String(b.index)) || a.clients - b.clients || a.recall_at_10 - b.recall_at_10);
  lines.push(table(["system", "index", "params", "clients", "recall@10", "QPS", "p50 ms", "p99 ms"],
    sorted.map((r) => [r.system, r.index ?? "–", r.label ?? JSON.stringify(r.params ?? {}), r.clients,
      fmt(r.recall_at_10, 4), fmt(r.qps), fmt(r.p50_ms), fmt(r.p99_ms)])));
  // Best QPS at recall >= target, per series.
  const series = new Map();
  for (const r of rows) {
    const k = seriesKey(r);
    if (!series.has(k)) series.set(k, { system: r.system, index: r.index, clients: r.clients, points: [] });
    series.get(k).points.push(r);
  }
  const best = (pts, t) => {
    const ok = pts.filter((p) => p.recall_at_10 >= t);
    return ok.length ? Math.max(...ok.map((p) => p.qps)) : null;
  };
  const clientsList = [...new Set(rows.map((r) => r.clients))].sort((a, b) => a - b);
  const bestRows = [];
  for (const c of clientsList) {
    const ss = [...series.values()].filter((s) => s.clients === c);
    for (const s of ss) {
      bestRows.push([c, s.system, s.index ?? "–", ...RECALL_TARGETS.map((t) => fmt(best(s.points, t)))]);
    }
    const sysBest = (sys, t) => {
      const v = ss.filter((s) => s.system === sys).map((s) => best(s.points, t)).filter((x) => x !== null);
      return v.length ? Math.max(...v) : null;
    };
    bestRows.push([c, "**Strata / LanceDB**", "best index each", ...RECALL_TARGETS.map((t) =>
      ratio(sysBest("strata", t), sysBest("lancedb", t)))]);
    if (ss.some((s) => s.system === "hnswlib")) {
      bestRows.push([c, "**Strata / hnswlib**", "", ...RECALL_TARGETS.map((t) =>
        ratio(sysBest("strata", t), sysBest("hnswlib", t)))]);
    }
  }
  lines.push("", "Best QPS at recall@10 ≥ target (– : the sweep never reached it):", "");
  lines.push(table(["clients", "system", "index", ...RECALL_TARGETS.map((t) => `QPS @ ≥ ${t}`)], bestRows));
  return lines.join("\n");
}

function ivfpqSection(w) {
  if (!w || !Array.isArray(w.points) || w.points.length === 0) return notRun("IVF_PQ, same parameters");
  const p = w.params || {};
  const lines = ["### 3b. IVF_PQ against IVF_PQ, same parameters (`--only ivfpq`)", ""];
  lines.push(`${fmt(p.rows)} rows, ${fmt(p.queries)} queries, k = ${p.k ?? 10}. LanceDB: ${p.lancedb_index ?? "–"}; ` +
    `Strata: ${p.strata_index ?? "–"}. Build = the createIndex call until the index covers every row ` +
    "(Strata: after the rows were compacted into the base, compaction timed apart).", "");
  lines.push(table(["system", "num_partitions", "num_sub_vectors", "num_bits", "compact s", "build s", "index bytes", "bytes are"],
    (w.build || []).map((b) => [b.system, fmt(b.num_partitions), fmt(b.num_sub_vectors), fmt(b.num_bits),
      fmt(b.compact_seconds), fmt(b.build_seconds), fmt(b.index_bytes), b.index_bytes_kind ?? "–"])));
  const s = (w.build || []).find((b) => b.system === "strata");
  const l = (w.build || []).find((b) => b.system === "lancedb");
  if (s && l) lines.push("", `Strata / LanceDB build time: ${ratio(s.build_seconds, l.build_seconds)} (< 1: Strata sooner).`);
  const rows = [];
  for (const e of w.points.filter((x) => x.system === "strata")) {
    const o = w.points.find((x) => x.system === "lancedb" && x.label === e.label && x.clients === e.clients);
    rows.push([e.label, e.clients, fmt(e.recall_at_10, 4), fmt(o?.recall_at_10, 4), fmt(e.qps), fmt(o?.qps), ratio(e.qps, o?.qps),
      `${fmt(e.p50_ms)} / ${fmt(o?.p50_ms)}`, `${fmt(e.p99_ms)} / ${fmt(o?.p99_ms)}`]);
  }
  lines.push("", table(["params", "clients", "Strata recall@10", "LanceDB recall@10", "Strata QPS", "LanceDB QPS", "QPS ratio",
    "p50 ms S / L", "p99 ms S / L"], rows));
  return lines.join("\n");
}

function freshnessSection(fresh) {
  if (!Array.isArray(fresh) || fresh.length === 0) return notRun("Freshness");
  const lines = ["### 2. Freshness (write acknowledged → returned by a search on a second connection)", ""];
  lines.push(table(["system", "writes", "p50 ms", "p99 ms", "max ms", "mean ms", "polls/write"],
    fresh.map((r) => [r.system, fmt(r.writes), fmt(r.p50_ms), fmt(r.p99_ms), fmt(r.max_ms), fmt(r.mean_ms),
      fmt(r.polls_mean)])));
  const s = fresh.find((r) => r.system === "strata");
  const l = fresh.find((r) => r.system === "lancedb");
  if (s && l) {
    lines.push("", `Strata / LanceDB latency (< 1: Strata fresher): p50 ${ratio(s.p50_ms, l.p50_ms)}, ` +
      `p99 ${ratio(s.p99_ms, l.p99_ms)}, mean ${ratio(s.mean_ms, l.mean_ms)}.`);
  }
  return lines.join("\n");
}

function ftsSection(fts) {
  if (!fts || !Array.isArray(fts.runs)) return notRun("Full-text search");
  const lines = ["### 4. Full-text search (WordNet glosses, BM25)", ""];
  lines.push(`${fmt(fts.rows)} synsets, ${fmt(fts.queries)} queries (${fts.query_words ?? "gloss words"}), top ${fts.k ?? 10}.`, "");
  if (Array.isArray(fts.build)) {
    lines.push(table(["system", "index order", "load s", "index s", "until searchable s", "load rows/s"],
      fts.build.map((b) => [b.system, b.index_order ?? "–", fmt(b.load_seconds), fmt(b.index_seconds),
        fmt(b.searchable_seconds ?? (b.load_seconds + b.index_seconds)), fmt(b.load_rows_per_s)])));
    const s = fts.build.find((b) => b.system === "strata");
    const l = fts.build.find((b) => b.system === "lancedb");
    if (s && l) {
      const ss = s.searchable_seconds ?? s.load_seconds + s.index_seconds;
      const ls = l.searchable_seconds ?? l.load_seconds + l.index_seconds;
      lines.push("", `Strata / LanceDB time until searchable: ${ratio(ss, ls)} (< 1: Strata sooner).`);
    }
    lines.push("");
  }
  const clientsList = [...new Set(fts.runs.map((r) => r.clients))].sort((a, b) => a - b);
  const rows = [];
  for (const c of clientsList) {
    const s = fts.runs.find((r) => r.system === "strata" && r.clients === c);
    const l = fts.runs.find((r) => r.system === "lancedb" && r.clients === c);
    rows.push([c, fmt(s?.qps), fmt(l?.qps), ratio(s?.qps, l?.qps), `${fmt(s?.p50_ms)} / ${fmt(l?.p50_ms)}`,
      `${fmt(s?.p99_ms)} / ${fmt(l?.p99_ms)}`]);
  }
  lines.push(table(["clients", "Strata QPS", "LanceDB QPS", "QPS ratio", "p50 ms S / L", "p99 ms S / L"], rows));
  const a = fts.agreement;
  if (a) {
    lines.push("", `Top-10 agreement over ${fmt(a.queries)} queries: mean overlap ${fmt(a.mean_top10_overlap, 3)}, ` +
      `identical sets ${fmt(100 * a.identical_top10_fraction, 1)} %` +
      (a.mean_top10_overlap_ties_counted !== undefined
        ? `, mean overlap counting ties at the 10th score ${fmt(a.mean_top10_overlap_ties_counted, 3)}` : "") +
      (a.shared_hit_score_rel_diff_median !== undefined
        ? `; BM25 scores of shared hits differ by ${fmt(100 * a.shared_hit_score_rel_diff_median, 2)} % (median), ` +
          `${fmt(100 * a.shared_hit_score_rel_diff_p99, 2)} % (p99)` : "") + ".");
    const top = (hits) => (hits || []).map((h) => `${h.synset} (${fmt(h.score, 3)})`).join(", ") || "(none)";
    if ((a.examples || []).length) lines.push("", "Examples (top 3 with BM25 scores):", "");
    for (const ex of a.examples || []) {
      lines.push(`- \`${ex.query}\` (top-10 overlap ${fmt(ex.overlap, 2)}): Strata ${top(ex.strata)}; LanceDB ${top(ex.lancedb)}`);
    }
  }
  return lines.join("\n");
}

function flushSection(flush) {
  if (!Array.isArray(flush) || flush.length === 0) return notRun("Flush / optimize");
  const lines = ["### 5. Flush (Strata) vs optimize() (LanceDB) under sustained writes", ""];
  lines.push(table(["system", "op", "calls", "p50 ms", "p99 ms", "max ms", "writer rows/s", "writer errors"],
    flush.map((r) => [r.system, r.op, fmt(r.calls), fmt(r.p50_ms), fmt(r.p99_ms), fmt(r.max_ms),
      fmt(r.writer_rows_per_s), fmt(r.writer_errors)])));
  const s = flush.find((r) => r.system === "strata");
  const l = flush.find((r) => r.system === "lancedb");
  if (s && l) {
    lines.push("", `Strata / LanceDB: p50 ${ratio(s.p50_ms, l.p50_ms)}, p99 ${ratio(s.p99_ms, l.p99_ms)} ` +
      `(< 1: Strata's call is shorter). The writer is paced to the same target on both ` +
      `(${fmt(s.writer_target_rows_per_s ?? 2000)} rows/s), so its rows/s shows whether writes kept up during the calls, ` +
      `not which system writes faster.`);
  }
  return lines.join("\n");
}

function swwSection(sww) {
  if (!sww || !Array.isArray(sww.runs) || sww.runs.length === 0) return notRun("Search while writing");
  const p = sww.params || {};
  const lines = ["### 6. Search while writing (synthetic clustered 128-d vectors)", ""];
  lines.push(`${fmt(p.clusters)} Gaussian clusters, ${p.dim}-d, k = ${p.k}. Idle and while-writing phases: the ` +
    `${fmt(p.queries)} queries, cycled for at least ${fmt(p.phase_min_seconds)} s; every phase (and the ` +
    `${fmt(p.queries)} read-after-write pairs) stops after ${fmt(p.budget_seconds)} s. Writer: 1 row every ` +
    `${p.write_interval_ms} ms on another connection, one add in flight. ` +
    "Latencies in ms; raw = read-after-write (add 1 row, then a k = 1 search for its exact vector). " +
    "RSS: Strata's server process; LanceDB's figure is the Node process embedding it (and the driver).", "");
  lines.push(table(["system", "rows", "table rows", "searches idle / writing", "idle p50 / p99", "writing p50 / p99",
    "writing / idle p50", "writer rows (rows/s)", "raw p50 / p99", "raw misses", "RSS start → end MiB", "load avg (1 min)"],
    sww.runs.map((r) => [r.system, fmt(r.rows), fmt(r.table_rows), `${fmt(r.idle_queries)} / ${fmt(r.writing_queries)}`,
      `${fmt(r.idle_p50_ms)} / ${fmt(r.idle_p99_ms)}`,
      `${fmt(r.writing_p50_ms)} / ${fmt(r.writing_p99_ms)}`, ratio(r.writing_p50_ms, r.idle_p50_ms),
      `${fmt(r.writer_rows)} (${fmt(r.writer_rows_per_s)})`, `${fmt(r.raw_p50_ms)} / ${fmt(r.raw_p99_ms)}`,
      `${fmt(r.raw_misses)} / ${fmt(r.raw_pairs)}`,
      `${fmt(r.rss_start_kib / 1024, 0)} → ${fmt(r.rss_end_kib / 1024, 0)}`, fmt(r.load_avg_1m, 2)])));
  if (Array.isArray(sww.summary) && sww.summary.length) {
    lines.push("", "Strata's targets, per system (worst size point):", "");
    lines.push(table(["system", "writing / idle p50 (target ≤ 1.5×)", "raw p99 ms (target ≤ 5)",
      "raw p50 largest size / 50,000 rows (else the smallest; target ≤ 1.5×)", "raw misses"],
      sww.summary.map((e) => [e.system, ratio(e.max_writing_over_idle_p50, 1), fmt(e.max_raw_p99_ms),
        e.raw_p50_growth === null || e.raw_p50_growth === undefined ? "– (one size)"
          : `${ratio(e.raw_p50_growth, 1)} (${e.raw_p50_growth_rows.map((n) => fmt(n)).join(" → ")})`,
        fmt(e.raw_misses)])));
  }
  return lines.join("\n");
}

function filteredSection(w) {
  if (!w || !Array.isArray(w.points) || w.points.length === 0) return notRun("Filtered vector search");
  const p = w.params || {};
  const lines = ["### 7. Filtered vector search (synthetic clustered 128-d vectors, BTree on `tag`)", ""];
  lines.push(`${fmt(p.rows)} rows, ${fmt(p.queries)} queries, k = ${p.k}, one client, prefilter on both; q/s is the ` +
    `median of ${p.passes} passes (filters interleaved), ratio = q/s over the same system's unfiltered q/s, ` +
    "recall@10 against exact search with the same filter. Strata: HNSW maintained from the empty table, then " +
    "compacted into the base; LanceDB: IVF_HNSW_SQ with the client's defaults after loading.", "");
  const rows = [];
  for (const s of w.points.filter((e) => e.system === "strata")) {
    const l = w.points.find((e) => e.system === "lancedb" && e.filter === s.filter) || {};
    rows.push([s.filter === "none" ? "none" : `\`${s.filter}\``, `${fmt(s.selectivity * 100, 1)} %`,
      fmt(s.qps), ratio(s.ratio_to_unfiltered, 1), fmt(s.recall_at_10, 3),
      fmt(l.qps), ratio(l.ratio_to_unfiltered, 1), fmt(l.recall_at_10, 3),
      ratio(s.qps, l.qps)]);
  }
  lines.push(table(["filter", "rows passing", "Strata q/s", "Strata / unfiltered", "Strata recall@10", "LanceDB q/s",
    "LanceDB / unfiltered", "LanceDB recall@10", "q/s Strata / LanceDB"], rows));
  return lines.join("\n");
}

/** The whole markdown report (everything that goes between the markers). */
export function renderMarkdown(results, { pngPrefix = "" } = {}) {
  const parts = [
    `_Generated by bench/compare/report.mjs from results.json (${results.meta?.date ?? "undated"}). ` +
      "Ratios are Strata / LanceDB: > 1 is better for Strata on throughput, < 1 on latency._",
    metaSection(results.meta),
    ingestSection(results.ingest),
    freshnessSection(results.freshness),
    vectorSection(results),
    ivfpqSection(results.ivfpq),
    ftsSection(results.fts),
    flushSection(results.flush),
    swwSection(results.sww),
    filteredSection(results.filtered),
  ];
  if (pngPrefix) {
    parts.push(`![recall vs QPS](${pngPrefix}recall_qps.png)\n\n![ingest](${pngPrefix}ingest.png)`);
  }
  return parts.join("\n\n") + "\n";
}

// ---------- charts ----------

function hasGnuplot() {
  try {
    execFileSync("gnuplot", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const q = (s) => `"${String(s).replace(/"/g, "'")}"`;

function plotRecallQps(results, outPng, tmp) {
  const rows = vectorRows(results).filter((r) => r.qps > 0 && r.recall_at_10 !== undefined);
  if (rows.length === 0) return false;
  const series = new Map();
  for (const r of rows) {
    const k = seriesKey(r);
    if (!series.has(k)) series.set(k, []);
    series.get(k).push(r);
  }
  const plots = [];
  let i = 0;
  for (const [name, pts] of series) {
    const file = path.join(tmp, `vec_${i}.dat`);
    pts.sort((a, b) => a.recall_at_10 - b.recall_at_10);
    fs.writeFileSync(file, pts.map((p) => `${p.recall_at_10} ${p.qps}`).join("\n") + "\n");
    const dash = pts[0].clients > 1 ? "dt 2" : "dt 1";
    plots.push(`${q(file)} using 1:2 with linespoints lw 2 ${dash} pt ${7 + (i % 6)} title ${q(name)}`);
    i++;
  }
  const script = [
    "set terminal pngcairo noenhanced size 1000,760 font 'sans,11'",
    `set output ${q(outPng)}`,
    "set title 'Fashion-MNIST 784-d, k=10: recall@10 vs queries/s (solid: 1 client, dashed: 8 clients)'",
    "set xlabel 'recall@10'",
    "set ylabel 'queries/s (log)'",
    "set logscale y",
    "set grid",
    "set key below",
    `plot ${plots.join(", \\\n  ")}`,
  ].join("\n");
  fs.writeFileSync(path.join(tmp, "recall_qps.gp"), script + "\n");
  execFileSync("gnuplot", [path.join(tmp, "recall_qps.gp")], { stdio: ["ignore", "ignore", "inherit"] });
  return true;
}

function plotIngest(results, outPng, tmp) {
  const ingest = Array.isArray(results.ingest) ? results.ingest : [];
  if (ingest.length === 0) return false;
  const batches = [...new Set(ingest.map((r) => r.batch))].sort((a, b) => a - b);
  const cols = [];
  for (const r of ingest) {
    for (const [key, what] of [["rows_per_s", "write"], ["searchable_rows_per_s", "until searchable"]]) {
      const name = `${r.system} ${r.index ?? ""} ${what}`.replace(/\s+/g, " ");
      if (!cols.some((c) => c.name === name)) cols.push({ name, system: r.system, index: r.index, key });
    }
  }
  const lines = [`batch ${cols.map((c) => q(c.name)).join(" ")}`];
  for (const b of batches) {
    lines.push(`${b} ${cols.map((c) => {
      const r = ingest.find((x) => x.batch === b && x.system === c.system && x.index === c.index);
      const v = r ? r[c.key] : null;
      return v && v > 0 ? v : "NaN";
    }).join(" ")}`);
  }
  const file = path.join(tmp, "ingest.dat");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  const script = [
    "set terminal pngcairo noenhanced size 1000,700 font 'sans,11'",
    `set output ${q(outPng)}`,
    "set title 'Ingest rows/s by rows per add (write acknowledged, and until searchable with an index)'",
    "set style data histograms",
    "set style histogram clustered gap 1",
    "set style fill solid 0.85 border -1",
    "set boxwidth 0.9",
    "set logscale y",
    "set yrange [1:*]",
    "set ylabel 'rows/s (log)'",
    "set xlabel 'rows per add'",
    "set grid ytics",
    "set key below",
    `plot for [i=2:${cols.length + 1}] ${q(file)} using i:xtic(1) title columnheader(i)`,
  ].join("\n");
  fs.writeFileSync(path.join(tmp, "ingest.gp"), script + "\n");
  execFileSync("gnuplot", [path.join(tmp, "ingest.gp")], { stdio: ["ignore", "ignore", "inherit"] });
  return true;
}

/** Writes both charts into `dir`; returns the files written. */
export function writeCharts(results, dir) {
  if (!hasGnuplot()) {
    console.error("report: gnuplot not found (scripts/install-deps installs gnuplot-nox); charts skipped");
    return [];
  }
  fs.mkdirSync(dir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "strata-report-"));
  const written = [];
  try {
    const rq = path.join(dir, "recall_qps.png");
    if (plotRecallQps(results, rq, tmp)) written.push(rq);
    const ing = path.join(dir, "ingest.png");
    if (plotIngest(results, ing, tmp)) written.push(ing);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return written;
}

/** Replaces the text between the markers of `docFile` with `body`; throws if a marker is missing. */
export function replaceBetweenMarkers(docFile, body) {
  const text = fs.readFileSync(docFile, "utf8");
  const b = text.indexOf(BEGIN);
  const e = text.indexOf(END);
  if (b < 0 || e < 0 || e < b) throw new Error(`${docFile}: markers ${BEGIN} ... ${END} not found`);
  const out = text.slice(0, b + BEGIN.length) + "\n" + body + text.slice(e);
  fs.writeFileSync(docFile, out);
}

function parseArgs(argv) {
  const opts = { results: null, docs: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--results") opts.results = argv[++i];
    else if (a === "--docs") opts.docs = true;
    else if (a === "--help" || a === "-h") opts.help = true;
    else throw new Error(`report: unknown argument '${a}' (usage: --results FILE [--docs])`);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help || !opts.results) {
    console.log("usage: node bench/compare/report.mjs --results DIR/results.json [--docs]");
    process.exit(opts.help ? 0 : 2);
  }
  const results = JSON.parse(fs.readFileSync(opts.results, "utf8"));
  const dir = path.dirname(path.resolve(opts.results));
  const md = renderMarkdown(results, { pngPrefix: "" });
  const charts = writeCharts(results, dir);
  const links = charts.map((f) => `![${path.basename(f, ".png")}](${path.basename(f)})`).join("\n\n");
  fs.writeFileSync(path.join(dir, "results.md"), "# Strata vs LanceDB OSS: results\n\n" + md + "\n" + links + "\n");
  const written = [path.join(dir, "results.md"), ...charts];
  if (opts.docs) {
    const doc = path.join(REPO, "docs/BENCHMARKS.md");
    replaceBetweenMarkers(doc, md);
    written.push(doc, ...writeCharts(results, path.join(REPO, "docs/bench")));
  }
  console.log(md);
  console.error(`report: wrote ${written.join(", ")}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e.stack || String(e));
    process.exit(1);
  });
}
