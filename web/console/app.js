// Strata console: pages over the REST API of the server that serves this file.
//   #/tables            databases' tables: live rows, size, indexes, status with its reason
//   #/lsm/TABLE         shards, MemTables, SSTables by generation, base table, index set; flush/compact
//   #/query/TABLE       vector / full-text / filter queries, results and explain_plan/ (query.js)
//   #/rows/TABLE        paged row browser with a filter (query.js)
//   #/versions/TABLE    versions and tags; create/delete a tag, restore a version (versions.js)
//   #/metrics           live charts from /metrics (kept in the page while it is open)
import * as api from "./api.js";
import { MetricsCollector, drawChart } from "./metrics.js";
import { pageQuery, pageRows } from "./query.js";
import { age, bytes, el, errorText, every, main, newPage, num, reportError, showBanner, table, tableSelect } from "./ui.js";
import { pageVersions } from "./versions.js";

const banner = document.getElementById("banner");
const footer = document.getElementById("footer");

// ---- (1) tables ------------------------------------------------------------------------------

function tableStatus(desc, indexes) {
  const reasons = [];
  let level = "ok";
  const raise = (l) => {
    if (l === "err" || (l === "warn" && level === "ok")) level = l;
  };
  for (const s of desc.shards || []) {
    if (s.state !== "open") {
      raise("err");
      reasons.push(`writer ${s.state}${s.state_reason ? ": " + s.state_reason : ""}`);
    }
    if (s.frozen.length >= 2) {
      raise("warn");
      reasons.push(`backpressure: ${s.frozen.length} MemTables frozen`);
    } else if (s.frozen.length === 1) {
      reasons.push("1 MemTable frozen, flushing");
    }
    if (s.sstables.length > 0) {
      reasons.push(`${s.sstables.length} SSTable${s.sstables.length === 1 ? "" : "s"} waiting for compaction`);
    }
  }
  if (desc.disk && desc.disk.below_floor) {
    raise("err");
    reasons.push(`disk below its free-space floor (${bytes(desc.disk.free_bytes)} free): writes refused`);
  }
  const unindexed = indexes.reduce((s, i) => s + (i.num_unindexed_rows || 0), 0);
  if (unindexed > 0) {
    raise("warn");
    reasons.push(`${num(unindexed)} rows not indexed yet`);
  }
  if (reasons.length === 0) reasons.push("up to date: everything flushed and compacted");
  return { level, text: reasons.join("; ") };
}

async function tableRow(name) {
  const [rows, stats, idx, desc] = await Promise.all([
    api.tablePost(name, "count_rows", {}),
    api.tablePost(name, "stats", {}),
    api.tablePost(name, "index/list", {}),
    api.tablePost(name, "mem_wal/describe", {}),
  ]);
  const indexes = idx.indexes || [];
  const status = tableStatus(desc, indexes);
  const base = desc.base || {};
  const dead = (base.rows || 0) - (base.live_rows || 0);
  return el(
    "tr",
    { "data-table": name },
    el("td", {}, el("a", { href: `#/lsm/${encodeURIComponent(name)}` }, name)),
    el("td", { class: "num rows" }, num(rows)),
    el("td", { class: "num" }, dead > 0 ? num(dead) : "0"),
    el("td", { class: "num" }, bytes(stats.total_bytes)),
    el(
      "td",
      {},
      indexes.length === 0
        ? el("span", { class: "muted" }, "none")
        : indexes.map((i) =>
            el(
              "div",
              {},
              `${i.index_name} (${i.index_type} on ${i.columns.join(", ")}): ${num(i.num_indexed_rows)} indexed, `,
              el("span", { class: i.num_unindexed_rows ? "warn" : "" }, `${num(i.num_unindexed_rows)} unindexed`),
            ),
          ),
    ),
    el("td", { class: `status ${status.level}` }, status.text),
    el(
      "td",
      {},
      el("a", { href: `#/query/${encodeURIComponent(name)}` }, "query"),
      " · ",
      el("a", { href: `#/rows/${encodeURIComponent(name)}` }, "rows"),
      " · ",
      el("a", { href: `#/versions/${encodeURIComponent(name)}` }, "versions"),
    ),
  );
}

function pageTables() {
  const body = el("tbody", {});
  const info = el("p", { class: "muted" }, "loading…");
  main.replaceChildren(
    el("h2", {}, `Tables of database “${api.database()}”`),
    info,
    el(
      "table",
      { id: "tables" },
      el(
        "thead",
        {},
        el("tr", {}, ["table", "rows (live)", "deleted/superseded (base)", "size", "indexes", "status", ""].map((h) => el("th", {}, h))),
      ),
      body,
    ),
  );
  return every(3000, async (alive) => {
    try {
      const names = await api.listTables();
      const rows = await Promise.all(
        names.map((n) => tableRow(n).catch((e) => el("tr", { "data-table": n }, el("td", {}, n), el("td", { colspan: 6, class: "err" }, errorText(e))))),
      );
      if (!alive()) return;
      body.replaceChildren(...rows);
      info.textContent = `${names.length} table${names.length === 1 ? "" : "s"} · refreshed ${new Date().toLocaleTimeString()} (every 3 s)`;
      showBanner(null);
    } catch (e) {
      if (alive()) reportError(e, info);
    }
  });
}

// ---- (2) LSM view ----------------------------------------------------------------------------

function genList(list) {
  return list.length === 0 ? el("span", { class: "muted" }, "none") : list.map((g) => el("span", { class: "gen" }, `gen ${g}`));
}

function renderShard(s) {
  return el(
    "section",
    { class: "shard" },
    el("h3", {}, `Shard ${s.shard_id}`),
    el(
      "div",
      { class: "cards" },
      el("div", { class: "card" }, "writer", el("b", { class: s.state === "open" ? "ok" : "err", id: "writer-state" }, s.state), s.state_reason ? el("small", {}, s.state_reason) : null, el("small", { class: "muted" }, ` for ${age(s.state_age_ms)}`)),
      el("div", { class: "card" }, "writer epoch", el("b", { id: "writer-epoch" }, s.writer_epoch)),
      el("div", { class: "card" }, "current generation", el("b", { id: "current-generation" }, s.current_generation)),
      el(
        "div",
        { class: "card" },
        "WAL positions",
        el("b", {}, `last ${s.wal_entry_position_last_seen}`),
        el("small", { class: "muted" }, `replay after ${s.replay_after_wal_entry_position}`),
      ),
      el(
        "div",
        { class: "card" },
        "recovery",
        el("b", {}, `${s.recovery.recoveries} recoveries`),
        el("small", { class: s.recovery.last_error ? "err" : "muted" }, s.recovery.last_error || `${s.recovery.attempts} attempts`),
      ),
    ),
    el("h3", {}, "Active MemTable"),
    table(
      ["generation", "rows", "bytes", "age"],
      [el("tr", {}, el("td", { class: "num" }, s.active.generation), el("td", { class: "num" }, num(s.active.rows)), el("td", { class: "num" }, bytes(s.active.bytes)), el("td", { class: "num" }, age(s.active.age_ms)))],
      { id: "active-memtable" },
    ),
    el("h3", {}, `Frozen MemTables (${s.frozen.length})`),
    s.frozen.length === 0
      ? el("p", { class: "muted" }, "none (nothing waiting to flush)")
      : table(["generation", "rows", "bytes"], s.frozen.map((f) => el("tr", {}, el("td", { class: "num" }, f.generation), el("td", { class: "num" }, num(f.rows)), el("td", { class: "num" }, bytes(f.bytes))))),
    el("h3", {}, `SSTables waiting for compaction (${s.sstables.length})`),
    s.sstables.length === 0
      ? el("p", { class: "muted" }, "none")
      : table(
          ["generation", "rows", "path"],
          s.sstables.map((t) => el("tr", { "data-generation": t.generation }, el("td", { class: "num" }, t.generation), el("td", { class: "num" }, num(t.rows)), el("td", { class: "muted" }, t.path))),
          { id: "sstables" },
        ),
    el("h3", {}, "In-memory index set (IndexStore::describe of the active MemTable)"),
    table(
      ["kind", "column", "name", "rows indexed"],
      s.indexes.map((i) => el("tr", {}, el("td", {}, i.kind), el("td", {}, i.column), el("td", {}, i.name), el("td", { class: "num" }, num(i.rows_indexed)))),
    ),
  );
}

function renderBase(b) {
  if (!b) return el("p", { class: "muted" }, "no base table");
  // {shard_id: generation} per shard compacted so far.
  const gens = Object.entries(b.compacted_generation || {});
  const compacted =
    gens.length === 0 ? "none yet" : gens.length === 1 ? `gen ${gens[0][1]}` : gens.map(([id, g]) => `${id.slice(0, 8)}: gen ${g}`).join(", ");
  return el(
    "div",
    {},
    el(
      "div",
      { class: "cards" },
      el("div", { class: "card" }, "version", el("b", {}, b.version)),
      el("div", { class: "card" }, "compacted through", el("b", { id: "compacted-generation" }, compacted)),
      el("div", { class: "card" }, "rows", el("b", {}, num(b.rows)), el("small", { class: "muted" }, `${num(b.live_rows)} live`)),
      el("div", { class: "card" }, "fragments", el("b", {}, num(b.fragments)), el("small", { class: "muted" }, bytes(b.bytes))),
    ),
    b.indexes && b.indexes.length
      ? table(["kind", "column", "name", "rows indexed"], b.indexes.map((i) => el("tr", {}, el("td", {}, i.kind), el("td", {}, i.column), el("td", {}, i.name), el("td", { class: "num" }, num(i.rows_indexed)))))
      : null,
  );
}

function pageLsm(tableName) {
  const header = el("div", { class: "toolbar" }, "loading…");
  const out = el("div", { id: "lsm" });
  const action = el("div", { id: "action-result", class: "muted" });
  const auto = el("input", { type: "checkbox", id: "auto-refresh", checked: true });
  main.replaceChildren(el("h2", {}, "LSM view"), header, action, out);
  let refresh = null;
  const start = async () => {
    try {
      const { sel, names } = await tableSelect(tableName, (t) => (location.hash = `#/lsm/${encodeURIComponent(t)}`));
      if (!tableName) {
        if (names.length === 0) {
          header.replaceChildren(el("span", { class: "muted" }, "no tables in this database"));
          return;
        }
        location.replace(`#/lsm/${encodeURIComponent(names[0])}`);
        return;
      }
      const flushBtn = el("button", { id: "flush-btn" }, "Flush");
      const compactBtn = el("button", { id: "compact-btn" }, "Compact");
      flushBtn.addEventListener("click", async () => {
        flushBtn.disabled = true;
        action.className = "muted";
        action.textContent = "flushing…";
        try {
          const r = await api.tablePost(tableName, "flush", { timeout_ms: 60000 });
          const parts = r.shards.map((s) =>
            s.sealed_generation === null || s.sealed_generation === undefined
              ? `nothing to seal (active MemTable empty)${s.waited_generation != null ? `; waited for generation ${s.waited_generation}` : ""}`
              : `sealed generation ${s.sealed_generation} and waited until generation ${s.waited_generation} was in an SSTable`,
          );
          action.className = "ok";
          action.replaceChildren(el("span", { id: "flush-result" }, `Flush: ${parts.join("; ")} (${r.elapsed_ms} ms).`));
          await refresh?.();
        } catch (e) {
          reportError(e, action);
        } finally {
          flushBtn.disabled = false;
        }
      });
      compactBtn.addEventListener("click", async () => {
        compactBtn.disabled = true;
        action.className = "muted";
        action.textContent = "compacting…";
        try {
          const r = await api.tablePost(tableName, "compact", { timeout_ms: 60000 });
          action.className = "ok";
          action.replaceChildren(
            el(
              "span",
              { id: "compact-result" },
              r.compacted_generations.length === 0
                ? `Compact: nothing to compact (${r.elapsed_ms} ms).`
                : `Compact: generations ${r.compacted_generations.join(", ")} merged into base version ${r.base_version}: ${num(r.rows_compacted)} rows in, ${num(r.rows_written)} written, ${bytes(r.bytes_written)}; ${r.sstables_remaining} SSTables remain (${r.elapsed_ms} ms).`,
            ),
          );
          await refresh?.();
        } catch (e) {
          reportError(e, action);
        } finally {
          compactBtn.disabled = false;
        }
      });
      const stamp = el("span", { class: "muted" });
      header.replaceChildren("table ", sel, flushBtn, compactBtn, el("label", {}, auto, " auto-refresh (2 s)"), stamp);
      const load = async () => {
        const d = await api.tablePost(tableName, "mem_wal/describe", {});
        const spec = d.lsm_write_spec;
        out.replaceChildren(
          el(
            "p",
            { class: "muted", id: "lsm-spec" },
            spec
              ? `LSM write spec: ${spec.sharding.mode}${spec.sharding.column ? ` on ${spec.sharding.column}` : ""}${spec.sharding.num_buckets ? `, ${spec.sharding.num_buckets} bucket(s)` : ""}; maintained indexes ${JSON.stringify(spec.maintained_indexes)}; writer options ${JSON.stringify(spec.writer_config_defaults)}`
              : "LSM write spec: none (server writer options, every index in the MemTables)",
          ),
          ...d.shards.map(renderShard),
          el("h3", {}, "Base table"),
          renderBase(d.base),
          d.disk ? el("p", { class: d.disk.below_floor ? "err" : "muted" }, `disk: ${bytes(d.disk.free_bytes)} free of ${bytes(d.disk.total_bytes)} (floor ${bytes(d.disk.min_free_bytes)})${d.disk.writes_refused ? `, ${d.disk.writes_refused} writes refused` : ""}`) : null,
        );
        stamp.textContent = `refreshed ${new Date().toLocaleTimeString()}`;
        showBanner(null);
      };
      refresh = load;
      stop = every(2000, async (alive) => {
        if (!auto.checked && out.childElementCount > 0) return;
        try {
          if (alive()) await load();
        } catch (e) {
          if (alive()) reportError(e, out);
        }
      });
    } catch (e) {
      reportError(e, header);
    }
  };
  let stop = null;
  start();
  return () => stop && stop();
}

// ---- (3) metrics -----------------------------------------------------------------------------

const collector = new MetricsCollector(() => api.metricsText());

function pageMetrics() {
  const charts = [
    { key: "puts", title: "puts/s", unit: "" },
    { key: "rows", title: "rows written/s", unit: "" },
    { key: "queries", title: "queries/s", unit: "" },
    { key: "p50", title: "query latency p50 (ms)", unit: " ms" },
    { key: "p99", title: "query latency p99 (ms)", unit: " ms" },
    { key: "flushMs", title: "flush duration, mean (ms)", unit: " ms" },
    { key: "bpWaits", title: "backpressure waits/s", unit: "" },
  ];
  const canvases = charts.map((c) => el("canvas", { width: 420, height: 160, "data-metric": c.key }));
  const info = el("p", { class: "muted" });
  main.replaceChildren(
    el("h2", {}, "Metrics"),
    info,
    el("div", { class: "charts" }, canvases),
  );
  return every(1000, () => {
    const s = collector.series;
    charts.forEach((c, i) => drawChart(canvases[i], c.title, s.t, s[c.key], c.unit));
    info.textContent = collector.error
      ? `metrics: ${collector.error}`
      : `${s.t.length} samples of /metrics every ${collector.intervalMs / 1000} s, kept while this page is open (rates over each interval; latency quantiles from the histogram buckets of strata_query_duration_seconds)`;
  });
}

// ---- router, login, connection ---------------------------------------------------------------

let pageCleanup = null;

const pages = { tables: pageTables, lsm: pageLsm, query: pageQuery, rows: pageRows, versions: pageVersions, metrics: pageMetrics };

function route() {
  newPage();
  if (pageCleanup) pageCleanup();
  pageCleanup = null;
  const [, page = "tables", arg] = location.hash.match(/^#\/([^/]*)\/?(.*)$/) || [];
  const name = pages[page] ? page : "tables";
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.page === name);
  if (!api.apiKey() && !sessionStorage.getItem("strata.noKey")) {
    main.replaceChildren(
      el("h2", {}, "Log in"),
      el("p", {}, "Enter the server's API key (strata serve --api-key) above. It is kept in this tab's session storage and sent as x-api-key. A server without API keys: log in with an empty key."),
    );
    document.getElementById("key").focus();
    return;
  }
  pageCleanup = pages[name](decodeURIComponent(arg || "")) || null;
}

const form = document.getElementById("login");
document.getElementById("db").value = api.database();
form.addEventListener("submit", (e) => {
  e.preventDefault();
  const key = document.getElementById("key").value;
  api.login(key, document.getElementById("db").value.trim());
  if (!key) sessionStorage.setItem("strata.noKey", "1");
  else sessionStorage.removeItem("strata.noKey");
  document.getElementById("key").value = "";
  showBanner(null);
  collector.start();
  route();
});
document.getElementById("logout-btn").addEventListener("click", () => {
  api.logout();
  sessionStorage.removeItem("strata.noKey");
  collector.stop();
  route();
});

api.onConnection(({ online, error }) => {
  if (online) {
    showBanner("warn", "Server reachable again.");
    setTimeout(() => banner.className === "warn" && showBanner(null), 2000);
    route(); // reload the page's data
  } else {
    showBanner("warn", `Server unreachable (${error}); retrying…`);
  }
});

// The key field says whether a key is set (never shows it).
function showLoginState() {
  const keyInput = document.getElementById("key");
  keyInput.placeholder = api.apiKey() ? "key set (this tab)" : sessionStorage.getItem("strata.noKey") ? "no key" : "x-api-key";
}
window.addEventListener("hashchange", showLoginState);
form.addEventListener("submit", showLoginState);
document.getElementById("logout-btn").addEventListener("click", showLoginState);
showLoginState();

footer.textContent = `Strata console · ${location.origin} · API key in session storage only`;
window.addEventListener("hashchange", route);
if (api.apiKey() || sessionStorage.getItem("strata.noKey")) collector.start();
route();
