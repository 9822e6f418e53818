// Helpers shared by the console's pages (app.js and the page modules beside it): DOM building,
// number formatting, error reporting and the page lifecycle (timers that stop when the page
// changes).
import * as api from "./api.js";

export const main = document.getElementById("main");
const banner = document.getElementById("banner");

// ---- small DOM and formatting helpers --------------------------------------------------------

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k in e && k !== "list") e[k] = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

export function table(headers, rows, attrs = {}) {
  return el(
    "table",
    attrs,
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows),
  );
}

export const num = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
export function bytes(n) {
  if (n === null || n === undefined) return "–";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let x = Number(n);
  while (x >= 1024 && i < u.length - 1) {
    x /= 1024;
    i++;
  }
  return `${i === 0 ? x : x.toFixed(1)} ${u[i]}`;
}
export function age(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7200000) return `${Math.round(ms / 60000)} min`;
  return `${(ms / 3600000).toFixed(1)} h`;
}
/** A float32 in its shortest form (0.1, not 0.10000000149011612). */
export function f32(x) {
  if (!Number.isFinite(x)) return String(x);
  for (let p = 1; p <= 9; p++) {
    const s = Number(x.toPrecision(p));
    if (Math.fround(s) === x) return String(s);
  }
  return String(x);
}

export function showBanner(kind, text) {
  if (!text) {
    banner.hidden = true;
    banner.textContent = "";
    return;
  }
  banner.hidden = false;
  banner.className = kind;
  banner.textContent = text;
}

export function errorText(e) {
  if (e instanceof api.ApiError) return `${e.status} ${e.code}: ${e.message}`;
  return String(e && e.message ? e.message : e);
}

// Errors of a page: a 401 goes to the banner (and the key field); others next to what failed.
export function reportError(e, where) {
  if (e instanceof api.ApiError && e.status === 401) {
    showBanner("error", `401 Unauthorized: ${e.message}. Enter the server's API key.`);
    if (where) where.replaceChildren(el("span", { class: "err" }, "401 unauthorized: log in with the server's API key"));
    document.getElementById("key").focus();
    return;
  }
  if (where) where.replaceChildren(el("span", { class: "err" }, errorText(e)));
  else showBanner("error", errorText(e));
}

// ---- page lifecycle --------------------------------------------------------------------------

let pageToken = 0;

/** A new page is shown: every() timers of the previous one stop. */
export function newPage() {
  pageToken++;
}

/** Runs fn now and every `ms` until the page changes (fn(alive) gets a liveness check). */
export function every(ms, fn) {
  const token = pageToken;
  let timer = null;
  let stopped = false;
  const alive = () => !stopped && token === pageToken;
  const tick = async () => {
    if (!alive()) return;
    try {
      await fn(alive);
    } finally {
      if (alive()) timer = setTimeout(tick, ms);
    }
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export async function tableSelect(current, onChange) {
  const names = await api.listTables();
  const sel = el(
    "select",
    { id: "table-select", onchange: () => onChange(sel.value) },
    names.map((n) => el("option", { value: n, selected: n === current }, n)),
  );
  return { sel, names };
}
