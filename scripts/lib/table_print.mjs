// Plain-text tables for script output: columns padded to their widest cell, numbers right-aligned.

/**
 * Formats `rows` (arrays of cells) under `header` (array of column names) as aligned text lines.
 * A cell that is a number, or a string that starts with a digit, sign or '.', is right-aligned.
 * @param {string[]} header
 * @param {Array<Array<string|number>>} rows
 * @param {object} [opts]
 * @param {string} [opts.indent] prefix of every line (default two spaces)
 * @param {boolean} [opts.right] right-align numeric cells (default true); false left-aligns all
 * @returns {string}
 */
export function formatTable(header, rows, { indent = "  ", right = true } = {}) {
  const cells = [header, ...rows].map((r) => r.map((c) => (c === undefined || c === null ? "" : String(c))));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const numeric = (s) => right && /^[-+]?[0-9.]/.test(s);
  const line = (r) => indent + r.map((c, i) => (numeric(c) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  const sep = indent + widths.map((w) => "-".repeat(w)).join("  ");
  return [line(cells[0]), sep, ...cells.slice(1).map(line)].join("\n");
}

/** Key/value pairs as two aligned columns (no header). */
export function formatPairs(pairs, { indent = "  " } = {}) {
  const w = Math.max(...pairs.map(([k]) => String(k).length));
  return pairs.map(([k, v]) => `${indent}${String(k).padEnd(w)}  ${v}`).join("\n");
}
