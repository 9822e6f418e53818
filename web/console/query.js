// Pages over query/ (answered as Arrow IPC files, read by arrow.js): the query console
// (#/query/TABLE: vector, full-text and filter queries, explain_plan/, a recall check) and the row
// browser (#/rows/TABLE: 20 rows a page with a filter and exact counts).
import * as api from "./api.js";
import { readArrowIpc } from "./arrow.js";
import { el, errorText, f32, main, num, reportError, showBanner, table, tableSelect } from "./ui.js";

// ---- query results (query console and row browser) ------------------------------------------

function vectorSummary(v, first = 4) {
  let sq = 0;
  for (const x of v) sq += x * x;
  const head = Array.from(v.subarray ? v.subarray(0, first) : v.slice(0, first), f32).join(", ");
  return el(
    "span",
    { class: "vec", title: Array.from(v, f32).join(", ") },
    `dim ${v.length} · ‖v‖ ${Math.sqrt(sq).toPrecision(4)} · [${head}${v.length > first ? ", …" : ""}]`,
  );
}
function cell(value, type) {
  if (value === null || value === undefined) return el("td", { class: "muted" }, "null");
  if (value instanceof Float32Array) return el("td", {}, vectorSummary(value));
  if (Array.isArray(value)) {
    if (value.length && value.every((x) => typeof x === "number")) return el("td", {}, vectorSummary(value));
    return el("td", {}, JSON.stringify(value).slice(0, 200));
  }
  if (value instanceof Uint8Array) return el("td", { class: "muted" }, `${value.length} bytes`);
  if (typeof value === "number") {
    const isF32 = type && type.id === 3 && type.precision === 1;
    return el("td", { class: "num" }, isF32 ? f32(value) : String(value));
  }
  if (typeof value === "object" && typeof value !== "bigint") return el("td", {}, JSON.stringify(value).slice(0, 200));
  return el("td", {}, String(value));
}
function resultsTable(result, attrs = {}) {
  return table(
    result.fields.map((f) => f.name),
    result.rows.map((r) => el("tr", {}, result.fields.map((f) => cell(r[f.name], f.type)))),
    attrs,
  );
}

// ---- query console ---------------------------------------------------------------------------

function vectorColumns(schema) {
  return schema.fields
    .filter((f) => f.type.type === "fixed_size_list" && f.type.fields?.[0]?.type?.type === "float")
    .map((f) => ({ name: f.name, dim: f.type.length }));
}
function textColumns(schema) {
  return schema.fields.filter((f) => f.type.type === "string" || f.type.type === "large_string").map((f) => f.name);
}

function parseVector(text) {
  const t = text.trim();
  if (!t) return null;
  const parts = t.replace(/^\[|\]$/g, "").split(/[\s,]+/).filter(Boolean);
  const v = parts.map(Number);
  if (v.some((x) => !Number.isFinite(x))) throw new Error(`the vector must be numbers separated by commas or spaces (got “${t.slice(0, 60)}”)`);
  return v;
}

export function pageQuery(tableName) {
  const header = el("div", { class: "toolbar" }, "loading…");
  const form = el("div");
  const results = el("div", { id: "results-area" });
  const plan = el("pre", { id: "plan", class: "muted" }, "(run a query to see its plan)");
  main.replaceChildren(el("h2", {}, "Query console"), header, form, el("h3", {}, "Results"), results, el("h3", {}, "Plan (explain_plan/)"), plan);
  (async () => {
    try {
      const { sel, names } = await tableSelect(tableName, (t) => (location.hash = `#/query/${encodeURIComponent(t)}`));
      if (!tableName) {
        if (names.length) location.replace(`#/query/${encodeURIComponent(names[0])}`);
        else header.replaceChildren(el("span", { class: "muted" }, "no tables in this database"));
        return;
      }
      header.replaceChildren("table ", sel);
      const desc = await api.tablePost(tableName, "describe", {});
      const vcols = vectorColumns(desc.schema);
      const tcols = textColumns(desc.schema);
      const vcol = el("select", { id: "vector-column" }, vcols.map((c) => el("option", { value: c.name }, `${c.name} (dim ${c.dim})`)));
      const vec = el("textarea", { id: "vector", rows: 3, placeholder: vcols.length ? `paste a vector: ${vcols[0].dim} numbers, e.g. [0.1, 0.2, …]` : "this table has no float32 vector column" });
      const rowN = el("input", { id: "row-n", type: "number", min: 0, value: 0, style: "width:5rem" });
      const useRow = el("button", { id: "use-row" }, "use row N's vector");
      const fts = el("input", { id: "fts", size: 30, placeholder: "full-text query (BM25)" });
      const ftsCol = el("select", { id: "fts-column" }, el("option", { value: "" }, "all indexed text columns"), tcols.map((c) => el("option", { value: c }, c)));
      const filter = el("input", { id: "filter", size: 40, placeholder: "SQL filter, e.g. id > 10 AND label LIKE 'a%'" });
      const k = el("input", { id: "k", type: "number", min: 1, value: 10, style: "width:5rem" });
      const ef = el("input", { id: "ef", type: "number", min: 1, placeholder: "default", style: "width:6rem" });
      const bypass = el("input", { id: "bypass", type: "checkbox" });
      const run = el("button", { id: "run-query" }, "Run");
      const note = el("span", { id: "query-note", class: "muted" });
      useRow.addEventListener("click", async () => {
        try {
          const col = vcol.value;
          const buf = await api.queryArrow(tableName, { k: 1, offset: Number(rowN.value) || 0, columns: [col] });
          const r = readArrowIpc(buf);
          if (r.numRows === 0) throw new Error(`the table has no row ${rowN.value} (rows are numbered from 0 in scan order)`);
          const v = r.rows[0][col];
          if (!v) throw new Error(`row ${rowN.value} has a null ${col}`);
          vec.value = "[" + Array.from(v, f32).join(", ") + "]";
          note.textContent = `vector of row ${rowN.value} (scan order)`;
        } catch (e) {
          reportError(e, note);
        }
      });
      run.addEventListener("click", async () => {
        const body = { k: Number(k.value) || 10 };
        try {
          const v = parseVector(vec.value);
          if (v) {
            body.vector = v;
            body.vector_column = vcol.value;
            if (ef.value) body.ef = Number(ef.value);
            if (bypass.checked) body.bypass_vector_index = true;
          }
          if (fts.value.trim()) {
            body.full_text_query = { query: fts.value.trim() };
            if (ftsCol.value) body.full_text_query.columns = [ftsCol.value];
          }
          if (filter.value.trim()) body.filter = filter.value.trim();
        } catch (e) {
          results.replaceChildren(el("span", { class: "err" }, errorText(e)));
          return;
        }
        run.disabled = true;
        note.textContent = "running…";
        const t0 = performance.now();
        try {
          const [buf, explain] = await Promise.all([
            api.queryArrow(tableName, body),
            api.tablePost(tableName, "explain_plan", { verbose: false, query: body }).catch((e) => `(explain_plan failed: ${errorText(e)})`),
          ]);
          const ms = performance.now() - t0;
          const r = readArrowIpc(buf);
          results.replaceChildren(resultsTable(r, { id: "results" }));
          note.textContent = `${r.numRows} row${r.numRows === 1 ? "" : "s"} in ${ms.toFixed(1)} ms (query and plan requests)`;
          plan.className = "";
          plan.textContent = typeof explain === "string" ? explain : JSON.stringify(explain, null, 2);
          showBanner(null);
        } catch (e) {
          note.textContent = "";
          reportError(e, results);
        } finally {
          run.disabled = false;
        }
      });
      // Recall of the vector index: the vectors of a sample of rows as queries, the index's
      // answer against the exact one (bypass_vector_index), compared by _rowid.
      const recallBtn = el("button", { id: "check-recall" }, "check recall");
      const recallOut = el("span", { id: "recall-result", class: "muted" });
      recallBtn.addEventListener("click", async () => {
        recallBtn.disabled = true;
        try {
          const kk = Number(k.value) || 10;
          const f = filter.value.trim();
          const total = await api.tablePost(tableName, "count_rows", {});
          const SAMPLE = Math.min(20, total);
          if (SAMPLE === 0) throw new Error("the table is empty");
          const offsets = new Set();
          while (offsets.size < SAMPLE) offsets.add(Math.floor(Math.random() * total));
          // The narrowest projection the route takes: one scalar column (plus _rowid).
          const small = (desc.schema.fields.find((x) => x.name !== vcol.value && x.type.type !== "fixed_size_list") || { name: vcol.value }).name;
          const recalls = [];
          let msIndex = 0;
          let msExact = 0;
          for (const off of offsets) {
            recallOut.textContent = `query ${recalls.length + 1} of ${SAMPLE}…`;
            const one = readArrowIpc(await api.queryArrow(tableName, { k: 1, offset: off, columns: [vcol.value] }));
            const v = one.rows[0]?.[vcol.value];
            if (!v) continue;
            const body = { vector: Array.from(v), vector_column: vcol.value, k: kk, columns: [small], with_row_id: true };
            if (f) body.filter = f;
            if (ef.value) body.ef = Number(ef.value);
            let t0 = performance.now();
            const got = readArrowIpc(await api.queryArrow(tableName, body));
            msIndex += performance.now() - t0;
            t0 = performance.now();
            const exact = readArrowIpc(await api.queryArrow(tableName, { ...body, bypass_vector_index: true }));
            msExact += performance.now() - t0;
            const want = new Set(exact.columns.get("_rowid").map(String));
            if (want.size === 0) continue;
            const hit = got.columns.get("_rowid").filter((id) => want.has(String(id))).length;
            recalls.push(hit / want.size);
          }
          if (recalls.length === 0) throw new Error("no sample row had a vector (or the filter matched nothing)");
          const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
          recallOut.className = mean >= 0.95 ? "ok" : "warn";
          recallOut.textContent = `recall@${kk} over ${recalls.length} queries (sample rows' own vectors${f ? ", with the filter" : ""}): mean ${mean.toFixed(3)}, min ${Math.min(...recalls).toFixed(3)}; index ${(msIndex / recalls.length).toFixed(1)} ms, exact ${(msExact / recalls.length).toFixed(1)} ms per query`;
        } catch (e) {
          recallOut.className = "err";
          reportError(e, recallOut);
        } finally {
          recallBtn.disabled = false;
        }
      });
      form.replaceChildren(
        el("div", { class: "toolbar" }, "vector column ", vcol, " ", rowN, useRow),
        vec,
        el("div", { class: "toolbar" }, fts, " in ", ftsCol),
        el("div", { class: "toolbar" }, filter, el("label", {}, "k ", k), el("label", {}, "ef ", ef), el("label", {}, bypass, " bypass vector index (exact)"), run, note),
        el("div", { class: "toolbar" }, recallBtn, recallOut),
      );
    } catch (e) {
      reportError(e, header);
    }
  })();
  return null;
}

// ---- row browser -----------------------------------------------------------------------------

export function pageRows(tableName) {
  const header = el("div", { class: "toolbar" }, "loading…");
  const area = el("div", { id: "rows-area" });
  main.replaceChildren(el("h2", {}, "Rows"), header, area);
  const PAGE = 20;
  let offset = 0;
  (async () => {
    try {
      const { sel, names } = await tableSelect(tableName, (t) => (location.hash = `#/rows/${encodeURIComponent(t)}`));
      if (!tableName) {
        if (names.length) location.replace(`#/rows/${encodeURIComponent(names[0])}`);
        else header.replaceChildren(el("span", { class: "muted" }, "no tables in this database"));
        return;
      }
      const filter = el("input", { id: "row-filter", size: 40, placeholder: "SQL filter (Enter to apply)" });
      const prev = el("button", { id: "prev-page" }, "‹ previous");
      const next = el("button", { id: "next-page" }, "next ›");
      const pos = el("span", { id: "row-position", class: "muted" });
      const load = async () => {
        const f = filter.value.trim();
        const body = { k: PAGE, offset };
        if (f) body.filter = f;
        try {
          const [buf, total] = await Promise.all([
            api.queryArrow(tableName, body),
            api.tablePost(tableName, "count_rows", f ? { predicate: f } : {}),
          ]);
          const r = readArrowIpc(buf);
          area.replaceChildren(resultsTable(r, { id: "rows" }));
          pos.textContent = r.numRows === 0 ? `no rows (of ${num(total)})` : `rows ${num(offset + 1)}–${num(offset + r.numRows)} of ${num(total)}${f ? " matching" : ""}`;
          prev.disabled = offset === 0;
          next.disabled = offset + r.numRows >= total;
          showBanner(null);
        } catch (e) {
          reportError(e, area);
        }
      };
      filter.addEventListener("keydown", (e) => {
        if (e.key === "Enter") {
          offset = 0;
          load();
        }
      });
      prev.addEventListener("click", () => {
        offset = Math.max(0, offset - PAGE);
        load();
      });
      next.addEventListener("click", () => {
        offset += PAGE;
        load();
      });
      header.replaceChildren("table ", sel, filter, prev, next, pos);
      await load();
    } catch (e) {
      reportError(e, header);
    }
  })();
  return null;
}
