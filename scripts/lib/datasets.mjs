// Real data for `make demo` and `make bench-compare`: Fashion-MNIST (Debian dataset-fashion-mnist)
// and WordNet glosses (Debian wordnet-base), plus the pinned JavaScript clients and the exact
// ground truth from the `knn_ground_truth` tool.
//
// Fashion-MNIST: IDX files (LeCun's MNIST format, gzip): big-endian magic (0x803 images,
// 0x801 labels), big-endian uint32 dimensions, then uint8 values. 60,000 training and 10,000
// test images of 28x28 = 784 pixels, labels 0-9. Vectors are stored as float32 raw pixel values
// 0..255 (not rescaled), so squared l2 distances are exact integers.
//
// WordNet 3.0 data files (wndb(5WN)): lines starting with two spaces are the licence header;
// every other line is `offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt ...
// | gloss`, w_cnt in hexadecimal. A synset is identified by its part of speech and byte offset
// (the `n02084071` form ImageNet uses).
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FASHION_DIM = 784;
export const FASHION_DIR = process.env.STRATA_FASHION_MNIST_DIR || "/usr/share/datasets/fashion-mnist";
export const WORDNET_DIR = process.env.STRATA_WORDNET_DIR || "/usr/share/wordnet";

/**
 * The pinned clients from tests/e2e/node_modules (`scripts/install-deps` installs them).
 * Returns {lancedb, arrow}; throws an Error naming the fix when they are missing.
 */
export function loadClients() {
  const req = createRequire(path.join(REPO, "tests/e2e/package.json"));
  try {
    return { lancedb: req("@lancedb/lancedb"), arrow: req("apache-arrow") };
  } catch (e) {
    throw new Error(`cannot load @lancedb/lancedb / apache-arrow from tests/e2e/node_modules ` +
      `(run scripts/install-deps): ${e.message}`);
  }
}

/** Reads one gzipped IDX file; checks the magic, the trailing dimensions and the length. */
export function readIdx(file, wantMagic, wantDims) {
  const buf = zlib.gunzipSync(fs.readFileSync(file));
  const magic = buf.readUInt32BE(0);
  if (magic !== wantMagic) {
    throw new Error(`${file}: magic 0x${magic.toString(16)}, want 0x${wantMagic.toString(16)}`);
  }
  const ndim = magic & 0xff;
  const dims = [];
  for (let i = 0; i < ndim; i++) dims.push(buf.readUInt32BE(4 + 4 * i));
  if (dims.slice(1).join("x") !== wantDims.join("x")) throw new Error(`${file}: dims ${dims.join("x")}`);
  const header = 4 + 4 * ndim;
  const count = dims.reduce((a, b) => a * b, 1);
  if (buf.length !== header + count) throw new Error(`${file}: ${buf.length} bytes, want ${header + count}`);
  return { dims, data: new Uint8Array(buf.buffer, buf.byteOffset + header, count) };
}

function loadSplit(dir, prefix) {
  const images = readIdx(path.join(dir, `${prefix}-images-idx3-ubyte.gz`), 0x803, [28, 28]);
  const labels = readIdx(path.join(dir, `${prefix}-labels-idx1-ubyte.gz`), 0x801, []);
  if (images.dims[0] !== labels.dims[0]) {
    throw new Error(`${prefix}: ${images.dims[0]} images, ${labels.dims[0]} labels`);
  }
  return { n: images.dims[0], pixels: images.data, labels: labels.data };
}

/**
 * Fashion-MNIST from `dir`: {dim: 784, train: {n, pixels, labels}, test: {n, pixels, labels}}.
 * `pixels` is a Uint8Array of n*784 values, `labels` a Uint8Array of n values.
 */
export function loadFashionMnist(dir = FASHION_DIR) {
  return { dim: FASHION_DIM, train: loadSplit(dir, "train"), test: loadSplit(dir, "t10k") };
}

/** Row `i` of a split as a plain float array (a query vector for the LanceDB client). */
export function fashionVector(split, i) {
  return Array.from(split.pixels.subarray(i * FASHION_DIM, (i + 1) * FASHION_DIM));
}

/** The table schema: id int64 (primary key when `primaryKey`), label int32, vector f32 x 784. */
export function fashionSchema(arrow, { primaryKey = false } = {}) {
  const idMeta = primaryKey ? new Map([["lance-schema:unenforced-primary-key", "true"]]) : undefined;
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false, idMeta),
    new arrow.Field("label", new arrow.Int32(), false),
    new arrow.Field("vector",
      new arrow.FixedSizeList(FASHION_DIM, new arrow.Field("item", new arrow.Float32(), true)), false),
  ]);
}

/**
 * Rows [start, end) of `split` as one Arrow Table (one record batch) of `schema`
 * (fashionSchema). Row i gets id = idBase + i.
 */
export function fashionBatch(arrow, schema, split, start, end, idBase = 0) {
  const n = end - start;
  const ids = new BigInt64Array(n);
  const labels = new Int32Array(n);
  const values = new Float32Array(n * FASHION_DIM);
  for (let i = 0; i < n; i++) {
    ids[i] = BigInt(idBase + start + i);
    labels[i] = split.labels[start + i];
  }
  const px = split.pixels.subarray(start * FASHION_DIM, end * FASHION_DIM);
  for (let j = 0; j < px.length; j++) values[j] = px[j];
  const [idF, labelF, vecF] = schema.fields;
  const child = arrow.makeData({ type: vecF.type.children[0].type, length: n * FASHION_DIM, nullCount: 0, data: values });
  const children = [
    arrow.makeData({ type: idF.type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: labelF.type, length: n, nullCount: 0, data: labels }),
    arrow.makeData({ type: vecF.type, length: n, nullCount: 0, child }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, struct)]);
}

const WORDNET_FILES = [["noun", "n"], ["verb", "v"], ["adj", "a"], ["adv", "r"]];

/**
 * Every synset of WordNet's data.{noun,verb,adj,adv} in file order:
 * [{synset: "n00001740", pos: "n", words: "entity", gloss: "that which is ..."}].
 * `words` joins the synset's lemmas with ", " (underscores become spaces, adjective markers
 * like "(a)" removed). `limit` stops after that many synsets in all.
 */
export function loadWordnet(dir = WORDNET_DIR, limit = Infinity) {
  const out = [];
  for (const [file, pos] of WORDNET_FILES) {
    const text = fs.readFileSync(path.join(dir, `data.${file}`), "latin1");
    for (const line of text.split("\n")) {
      if (out.length >= limit) return out;
      if (line.length === 0 || line.startsWith("  ")) continue;
      const bar = line.indexOf(" | ");
      const fields = (bar >= 0 ? line.slice(0, bar) : line).split(" ");
      const wCnt = parseInt(fields[3], 16);
      const words = [];
      for (let w = 0; w < wCnt; w++) {
        words.push(fields[4 + 2 * w].replace(/\(.*\)$/, "").replace(/_/g, " "));
      }
      out.push({
        synset: `${pos}${fields[0]}`,
        pos,
        words: words.join(", "),
        gloss: bar >= 0 ? line.slice(bar + 3).trim() : "",
      });
    }
  }
  return out;
}

/**
 * Exact top-k ground truth for test images [0, queries) among training images [0, train)
 * (only label `label` when given), computed by the C++ `knn_ground_truth` tool next to the
 * strata binary and cached as JSON under `cacheDir`. Returns {ids: [[...]], dist: [[...]]}
 * with squared l2 distances as integers, nearest first, ties by smaller id.
 */
export function groundTruth({ tool, cacheDir, train, queries, k, label = null, dataset = FASHION_DIR }) {
  fs.mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, `fmnist-gt-${train}-${queries}-${k}-${label ?? "all"}.json`);
  if (!fs.existsSync(file)) {
    const args = ["--dataset", dataset, "--train", String(train), "--queries", String(queries),
      "--k", String(k), "--out", file];
    if (label !== null) args.push("--label", String(label));
    execFileSync(tool, args, { stdio: ["ignore", "ignore", "inherit"] });
  }
  const gt = JSON.parse(fs.readFileSync(file, "utf8"));
  if (gt.train !== train || gt.queries !== queries || gt.k !== k) throw new Error(`${file}: stale ground truth`);
  return gt;
}

/** Exact squared l2 between training row `t` and test row `q` (integers, so exact). */
export function squaredL2(train, t, test, q) {
  let s = 0;
  const a = train.pixels, b = test.pixels, ao = t * FASHION_DIM, bo = q * FASHION_DIM;
  for (let j = 0; j < FASHION_DIM; j++) {
    const d = a[ao + j] - b[bo + j];
    s += d * d;
  }
  return s;
}

/**
 * recall@k of one answer: the fraction of the true top-k found, where a returned training id
 * also counts when its exact distance ties the true k-th distance (ann-benchmarks' rule), and a
 * repeated id counts once.
 * `returned` is an array of training ids (numbers), `gtIds`/`gtDist` the query's ground truth.
 */
export function recallAtK(returned, gtIds, gtDist, k, data, q) {
  const truth = new Set(gtIds.slice(0, k));
  const kth = gtDist[k - 1];
  // Each distinct id counts once: an answer repeating a row (a broken tier merge) loses recall.
  let hit = 0;
  for (const id of new Set(returned.slice(0, k))) {
    if (truth.has(id) || squaredL2(data.train, id, data.test, q) <= kth) hit++;
  }
  return Math.min(hit, k) / k;
}
