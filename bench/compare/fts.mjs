// Workload 4 of `make bench-compare`: full-text search on WordNet glosses, Strata vs LanceDB OSS.
//
// Data: every WordNet 3.0 synset (117,659; --quick: the first 5,000) as {synset, words, gloss}
// (scripts/lib/datasets.mjs loadWordnet). Strata's table has `synset` as its primary key (field
// metadata "lance-schema:unenforced-primary-key"; created with createEmptyTable + add because the
// 0.31 client's createTable(rows, {schema}) drops field metadata); LanceDB's is a plain table.
// Both get the same batched adds (BATCH rows per add).
//
// Index, each at its documented best practice:
// - Strata: the FTS index is created on the empty table BEFORE loading, so every add is indexed
//   as it is written (the MemTable maintains it); index_seconds is that create_index call plus
//   the waitForIndex after the last add (time from the last acknowledged add until searchable).
// - LanceDB: load first, then createIndex(Index.fts()) and waitForIndex (its docs' order).
// Tokenizer: identical Index.fts() options on both (the LanceDB defaults, with_position off):
// simple base tokenizer, max_token_length 40, lower-casing, English Snowball stemming, the
// Lucene 33-word English stop list, ASCII folding. The remaining differences are listed in
// TOKENIZER_NOTES and in docs/BENCHMARKS.md.
//
// Queries: QUERIES (--quick 50) deterministic queries, each 1-3 distinct content words drawn
// with a seeded PRNG from the gloss of a randomly chosen synset (words of >= 3 letters, not stop
// words); OR semantics (the client's plain fullTextSearch). Each query is
// `table.search(q, "fts").select(["synset", "_score"]).limit(10)` on both systems.
// Timed: after a warm-up pass, every query at 1 and at 8 concurrent clients (8 async workers
// sharing one table handle, taking queries from a shared counter); per-query wall latency from
// the call until the rows are decoded; QPS = queries / wall time of the whole pass.
// Agreement (from the 1-client pass): per query |A ∩ B| / max(|A|, |B|) of the two top-10
// synset sets (= /10 whenever either side returns 10), the fraction of identical sets, the same
// overlap counting hits that tie the 10th score as agreeing, the median relative score
// difference on shared hits, and three example queries with both top-3.
import { loadWordnet } from "../../scripts/lib/datasets.mjs";
import { rng } from "../../tests/e2e/lib/vectors.mjs";

export const BATCH = 5000;
export const SEED = 20240607;
const K = 10;
const FTS_OPTIONS = {
  baseTokenizer: "simple",
  language: "English",
  withPosition: false,
  maxTokenLength: 40,
  lowercase: true,
  stem: true,
  removeStopWords: true,
  asciiFolding: true,
};
// Lucene / tantivy English stop words, plus words whose English stem is one ("its" -> "it",
// "being" -> "be"), so that no query word is dropped by one tokenizer and kept by the other.
const STOP = new Set(("a an and are as at be but by for if in into is it no not of on or such that the " +
  "their then there these they this to was will with its being").split(" "));

export const TOKENIZER_NOTES = [
  "Same Index.fts() options on both: simple tokenizer, max_token_length 40, lower_case, " +
    "English Snowball stemmer, remove_stop_words (the Lucene 33-word English list on both), " +
    "ascii_folding, with_position false.",
  "Filter order differs: LanceDB (lance-index) runs lower-case -> stem -> stop words -> ASCII " +
    "folding; Strata runs ASCII folding -> lower-case -> stop words -> stem. So LanceDB also drops " +
    "words whose stem is a stop word (\"its\" -> \"it\", \"being\" -> \"be\") and Strata keeps them; " +
    "this changes document lengths (BM25 normalisation) slightly, and a query of such a word (e.g. \"willful\") finds nothing on LanceDB.",
  "Long tokens: LanceDB (tantivy RemoveLongFilter) drops tokens of >= 40 bytes, Strata drops > 40.",
  "ASCII folding: tantivy's AsciiFoldingFilter table vs Strata's NFKD + mark stripping " +
    "(e.g. \"ß\"/\"æ\" differ); WordNet glosses are almost entirely ASCII.",
  "Letters/digits: tantivy splits on !char::is_alphanumeric, Strata on Unicode categories L*/N*.",
];


/** `n` queries of 1-3 distinct content words from the glosses of `rows`, seeded. */
export function buildQueries(rows, n, seed = SEED) {
  const rand = rng(seed); // mulberry32, shared with the e2e tests
  const out = [];
  while (out.length < n) {
    const row = rows[Math.floor(rand() * rows.length)];
    const words = [...new Set((row.gloss.match(/[A-Za-z]+/g) || []).map((w) => w.toLowerCase()))]
      .filter((w) => w.length >= 3 && !STOP.has(w));
    if (words.length === 0) continue;
    const want = 1 + Math.floor(rand() * 3);
    const picked = [];
    while (picked.length < Math.min(want, words.length)) {
      const w = words[Math.floor(rand() * words.length)];
      if (!picked.includes(w)) picked.push(w);
    }
    out.push(picked.join(" "));
  }
  return out;
}

/** The Arrow schema: synset utf8 (primary key when `primaryKey`), words utf8, gloss utf8. */
export function wordnetSchema(arrow, { primaryKey = false } = {}) {
  const meta = primaryKey ? new Map([["lance-schema:unenforced-primary-key", "true"]]) : undefined;
  return new arrow.Schema([
    new arrow.Field("synset", new arrow.Utf8(), false, meta),
    new arrow.Field("words", new arrow.Utf8(), false),
    new arrow.Field("gloss", new arrow.Utf8(), false),
  ]);
}

/** rows[start, end) as one Arrow Table of `schema` (one record batch). */
export function wordnetBatch(arrow, schema, rows, start, end) {
  const slice = rows.slice(start, end);
  const children = ["synset", "words", "gloss"].map(
    (name) => arrow.vectorFromArray(slice.map((r) => r[name]), new arrow.Utf8()).data[0]);
  const struct = arrow.makeData({
    type: new arrow.Struct(schema.fields), length: slice.length, nullCount: 0, children,
  });
  return new arrow.Table([new arrow.RecordBatch(schema, struct)]);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

const round = (x, d = 3) => (x === null || x === undefined ? x : Number(x.toFixed(d)));

// LanceDB 0.31 logs a deprecation warning on every FTS query whose select() omits `_score`
// (it is still appended); Strata accepts it the same way. Both answers hold synset + _score.
const SELECT = { strata: ["synset", "_score"], lancedb: ["synset", "_score"] };

async function ftsQuery(table, q, columns) {
  const rows = await table.search(q, "fts").select(columns).limit(K).toArray();
  return rows.map((r) => ({ synset: r.synset, score: r._score }));
}

/** Runs every query with `clients` workers; returns {qps, p50_ms, p99_ms, answers}. */
async function runPass(table, queries, clients, columns) {
  const lat = new Array(queries.length);
  const answers = new Array(queries.length);
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= queries.length) return;
      const s = performance.now();
      answers[i] = await ftsQuery(table, queries[i], columns);
      lat[i] = performance.now() - s;
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  const wall = (performance.now() - t0) / 1000;
  const sorted = lat.slice().sort((a, b) => a - b);
  return {
    qps: queries.length / wall,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    answers,
  };
}

async function loadSystem(ctx, sys, rows, schema, indexFirst) {
  const { lancedb, arrow } = ctx;
  const name = "wordnet";
  let indexSeconds = 0;
  const table = await sys.db.createEmptyTable(name, schema);
  const createIndex = async () => {
    const t = performance.now();
    await table.createIndex("gloss", { config: lancedb.Index.fts(FTS_OPTIONS) });
    indexSeconds += (performance.now() - t) / 1000;
  };
  if (indexFirst) await createIndex();
  const t0 = performance.now();
  for (let s = 0; s < rows.length; s += BATCH) {
    await table.add(wordnetBatch(arrow, schema, rows, s, Math.min(rows.length, s + BATCH)));
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  if (!indexFirst) await createIndex();
  const tw = performance.now();
  const indices = await table.listIndices();
  const ftsIdx = indices.find((ix) => (ix.columns || []).includes("gloss"));
  if (!ftsIdx) throw new Error(`${sys.system}: no index on gloss after createIndex: ${JSON.stringify(indices)}`);
  await table.waitForIndex([ftsIdx.name], 3600);
  indexSeconds += (performance.now() - tw) / 1000;
  const count = await table.countRows();
  if (count !== rows.length) throw new Error(`${sys.system}: countRows ${count}, want ${rows.length}`);
  return { table, load_seconds: loadSeconds, index_seconds: indexSeconds, index_name: ftsIdx.name };
}

function agreement(queries, strataAnswers, lanceAnswers) {
  let overlapSum = 0;
  let tieOverlapSum = 0;
  let identical = 0;
  const relDiffs = [];
  const perQuery = [];
  for (let i = 0; i < queries.length; i++) {
    const a = strataAnswers[i], b = lanceAnswers[i];
    const bScores = new Map(b.map((h) => [h.synset, h.score]));
    let inter = 0;
    for (const h of a) {
      if (bScores.has(h.synset)) {
        inter++;
        const sb = bScores.get(h.synset);
        if (sb) relDiffs.push(Math.abs(h.score - sb) / Math.abs(sb));
      }
    }
    const denom = Math.max(a.length, b.length, 1);
    const ov = a.length === 0 && b.length === 0 ? 1 : inter / denom;
    overlapSum += ov;
    // Tie-aware: a hit only one side returned counts as agreeing when it ties (relative 1e-5)
    // that side's own 10th score, i.e. the cut-off fell inside a group of equal scores.
    const aSet = new Set(a.map((h) => h.synset));
    const tiedOnly = (ans, other) => {
      if (ans.length < K) return 0;
      const last = ans[ans.length - 1].score;
      return ans.filter((h) => !other.has(h.synset) && Math.abs(h.score - last) <= 1e-5 * Math.abs(last)).length;
    };
    const tied = Math.min(tiedOnly(a, new Set(bScores.keys())), tiedOnly(b, aSet));
    tieOverlapSum += a.length === 0 && b.length === 0 ? 1 : (inter + tied) / denom;
    const same = inter === a.length && a.length === b.length;
    if (same) identical++;
    perQuery.push({ i, ov, same });
  }
  relDiffs.sort((x, y) => x - y);
  // Examples: the first query, the first identical one after it and the lowest-overlap one.
  const pick = new Set([0]);
  const ident = perQuery.find((p) => p.same && p.i > 0);
  if (ident) pick.add(ident.i);
  const worst = perQuery.reduce((w, p) => (p.ov < w.ov ? p : w), perQuery[0]);
  pick.add(worst.i);
  for (const p of perQuery) {
    if (pick.size >= 3) break;
    pick.add(p.i);
  }
  const top3 = (ans) => ans.slice(0, 3).map((h) => ({ synset: h.synset, score: round(h.score, 4) }));
  return {
    queries: queries.length,
    mean_top10_overlap: round(overlapSum / queries.length, 4),
    identical_top10_fraction: round(identical / queries.length, 4),
    mean_top10_overlap_ties_counted: round(tieOverlapSum / queries.length, 4),
    shared_hit_score_rel_diff_median: round(percentile(relDiffs, 50), 5),
    shared_hit_score_rel_diff_p99: round(percentile(relDiffs, 99), 5),
    examples: [...pick].slice(0, 3).map((i) => ({
      query: queries[i],
      overlap: round(perQuery[i].ov, 2),
      strata: top3(strataAnswers[i]),
      lancedb: top3(lanceAnswers[i]),
    })),
  };
}

/** The "fts" section of results.json (see the header comment for what is timed). */
export async function run(ctx) {
  const { arrow } = ctx;
  const quick = !!ctx.opts.quick;
  const rows = loadWordnet(undefined, quick ? 5000 : Infinity);
  const nQueries = ctx.opts.ftsQueries ?? (quick ? 50 : 1000);
  const queries = buildQueries(rows, nQueries);
  const clientsList = ctx.opts.clients ?? [1, 8];
  const warm = queries.slice(0, Math.min(100, queries.length));
  ctx.log(`fts: ${rows.length} synsets, ${queries.length} queries, clients ${clientsList.join("/")}`);

  const build = [];
  const runs = [];
  const answers = {};
  const systems = [
    { open: () => ctx.openStrata("fts_strata"), schema: wordnetSchema(arrow, { primaryKey: true }), indexFirst: true },
    { open: () => ctx.openLance("fts_lancedb"), schema: wordnetSchema(arrow), indexFirst: false },
  ];
  for (const spec of systems) {
    const sys = await spec.open();
    try {
      const loaded = await loadSystem(ctx, sys, rows, spec.schema, spec.indexFirst);
      build.push({
        system: sys.system,
        rows: rows.length,
        batch: BATCH,
        index_order: spec.indexFirst ? "index created before load (maintained while writing)"
          : "load, then createIndex + waitForIndex",
        load_seconds: round(loaded.load_seconds),
        index_seconds: round(loaded.index_seconds),
        searchable_seconds: round(loaded.load_seconds + loaded.index_seconds),
        load_rows_per_s: Math.round(rows.length / loaded.load_seconds),
      });
      ctx.log(`fts: ${sys.system} load ${loaded.load_seconds.toFixed(2)} s, index ${loaded.index_seconds.toFixed(2)} s`);
      await runPass(loaded.table, warm, 1, SELECT[sys.system]);
      for (const clients of clientsList) {
        const r = await runPass(loaded.table, queries, clients, SELECT[sys.system]);
        runs.push({ system: sys.system, clients, queries: queries.length,
          qps: round(r.qps, 1), p50_ms: round(r.p50_ms), p99_ms: round(r.p99_ms) });
        ctx.log(`fts: ${sys.system} clients=${clients} ${r.qps.toFixed(1)} q/s p50 ${r.p50_ms.toFixed(2)} ms p99 ${r.p99_ms.toFixed(2)} ms`);
        if (clients === clientsList[0]) answers[sys.system] = r.answers;
      }
    } finally {
      await sys.close();
    }
  }
  const agr = agreement(queries, answers.strata, answers.lancedb);
  ctx.log(`fts: top-10 overlap ${agr.mean_top10_overlap}, identical ${agr.identical_top10_fraction}`);
  return {
    rows: rows.length,
    queries: queries.length,
    k: K,
    query_words: "1-3 distinct gloss words (>= 3 letters, no stop words), OR semantics",
    seed: SEED,
    fts_options: FTS_OPTIONS,
    tokenizer_notes: TOKENIZER_NOTES,
    build,
    runs,
    agreement: agr,
  };
}
