// Reference vector math for the e2e tests and the demo, written independently of the server.
//
// Distance definitions follow LanceDB / Lance (lance-linalg): `l2` is the SQUARED Euclidean
// distance, `cosine` is 1 - cos(a, b), `dot` is 1 - a.b. Lower is nearer for all three.
// Inputs are float32 values (Float32Array or arrays of float32-representable numbers); sums are
// accumulated in float64, so results are the exact distances up to float64 rounding.

/** Deterministic PRNG (mulberry32) returning floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A vector of `dim` float32-representable numbers uniform in [-1, 1). */
export function randomVector(rand, dim) {
  const v = new Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.fround(rand() * 2 - 1);
  return v;
}

/** Distance between equal-length vectors `a` and `b` under `type` ("l2" | "cosine" | "dot"). */
export function distance(type, a, b) {
  if (a.length !== b.length) throw new Error(`dimension mismatch ${a.length} vs ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  let l2 = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    const d = x - y;
    l2 += d * d;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  switch (type) {
    case "l2":
      return l2;
    case "cosine":
      return na === 0 || nb === 0 ? 1 : 1 - dot / (Math.sqrt(na) * Math.sqrt(nb));
    case "dot":
      return 1 - dot;
    default:
      throw new Error(`unknown distance type ${type}`);
  }
}

/**
 * Exact top-k by brute force. `rows` is an array of {id, vector}. Returns the k nearest as
 * [{id, distance}] sorted by (distance, id) ascending, so ties are broken by the smaller id.
 */
export function bruteForceTopK(type, rows, query, k) {
  const all = rows.map((r) => ({ id: r.id, distance: distance(type, query, r.vector) }));
  all.sort((x, y) => x.distance - y.distance || x.id - y.id);
  return all.slice(0, k);
}

/**
 * Checks that `got` ([{id, distance}], as returned by the server) is a correct top-k answer
 * given the exact ranking `exact` (bruteForceTopK with k+1 or more entries when available).
 * Ties within `tol` at the k-th place may be resolved either way. Returns a list of problems
 * (empty when correct). `distOf(id)` gives the exact distance of any id.
 */
export function checkTopK(got, exact, k, distOf, tol) {
  const problems = [];
  const want = Math.min(k, exact.length);
  if (got.length !== want) problems.push(`expected ${want} results, got ${got.length}`);
  const seen = new Set();
  const kth = exact[want - 1]?.distance ?? Infinity;
  for (let i = 0; i < got.length; i++) {
    const { id, distance: d } = got[i];
    if (seen.has(id)) problems.push(`id ${id} returned twice`);
    seen.add(id);
    const truth = distOf(id);
    if (truth === undefined) {
      problems.push(`id ${id} does not exist`);
      continue;
    }
    const t = tol * Math.max(1, Math.abs(truth));
    if (!(Math.abs(d - truth) <= t)) problems.push(`id ${id}: _distance ${d}, exact ${truth}`);
    if (truth > kth + tol * Math.max(1, Math.abs(kth))) {
      problems.push(`id ${id} (distance ${truth}) is not in the top ${k} (k-th distance ${kth})`);
    }
    if (i > 0 && d < got[i - 1].distance) problems.push(`results not sorted by _distance at ${i}`);
  }
  return problems;
}
