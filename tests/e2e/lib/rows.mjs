// Result rows of the LanceDB client as plain JS values, shared by the e2e suites.

/** Converts a result row (Arrow StructRow proxy) into plain JS: int64 -> number, vectors -> arrays. */
export function plain(row) {
  const out = {};
  for (const [k, v] of Object.entries(row.toJSON ? row.toJSON() : row)) {
    if (typeof v === "bigint") out[k] = Number(v);
    else if (v && typeof v === "object" && typeof v.toArray === "function") out[k] = Array.from(v.toArray());
    else out[k] = v;
  }
  return out;
}

/** Runs a query and returns its rows as plain objects. */
export async function rowsOf(query) {
  return (await query.toArray()).map(plain);
}
