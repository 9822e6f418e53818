// The console's calls to the REST API of the server that serves it (same origin). The API key
// lives in sessionStorage (this tab only, gone when the tab closes) and goes out as x-api-key;
// the database as x-lancedb-database.
//
// A 401 is an ApiError with status 401 (the page shows it and asks for the key again). When the
// server cannot be reached (restart, network), a call waits and retries with a growing delay (up
// to 5 s) until it answers, reporting through onConnection so the page can say so.

const KEY = "strata.apiKey";
const DB = "strata.database";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const listeners = new Set();
let offlineSince = null;

/** fn({online: boolean, since: Date|null, error: string}) on every change of reachability. */
export function onConnection(fn) {
  listeners.add(fn);
}

function setOnline(online, error = "") {
  const was = offlineSince === null;
  if (online === was) return;
  offlineSince = online ? null : new Date();
  for (const fn of listeners) fn({ online, since: offlineSince, error });
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}
export function database() {
  return sessionStorage.getItem(DB) || "default";
}
export function login(key, db) {
  sessionStorage.setItem(KEY, key);
  sessionStorage.setItem(DB, db || "default");
}
export function logout() {
  sessionStorage.removeItem(KEY);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One request; retried while the server is unreachable. Returns the Response (status < 400) or
 * throws ApiError with the server's {"error","message"}.
 */
export async function request(method, path, { body, accept, signal } = {}) {
  const headers = { "x-lancedb-database": database() };
  const key = apiKey();
  if (key) headers["x-api-key"] = key;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (accept) headers.accept = accept;
  let delay = 250;
  for (;;) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: "no-store",
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      setOnline(false, String(e.message || e));
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
      continue;
    }
    setOnline(true);
    if (res.ok) return res;
    let code = "http_" + res.status;
    let message = `HTTP ${res.status}`;
    const text = await res.text();
    try {
      const j = JSON.parse(text);
      code = j.error || code;
      message = j.message || message;
    } catch {
      if (text) message = text.slice(0, 500);
    }
    throw new ApiError(res.status, code, message);
  }
}

/** POST /v1/table/{table}/{action}/ with a JSON body; the parsed JSON answer. */
export async function tablePost(table, action, body = {}) {
  const res = await request("POST", `/v1/table/${encodeURIComponent(table)}/${action}/`, { body });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** Every table name of the database (follows page_token). */
export async function listTables() {
  const names = [];
  let token = "";
  for (;;) {
    const q = token ? `?limit=1000&page_token=${encodeURIComponent(token)}` : "?limit=1000";
    const j = await (await request("GET", "/v1/table/" + q)).json();
    names.push(...j.tables);
    if (!j.page_token || j.tables.length === 0) return names;
    token = j.page_token;
  }
}

/** query/ (answered as an Arrow IPC file): the ArrayBuffer. */
export async function queryArrow(table, body) {
  const res = await request("POST", `/v1/table/${encodeURIComponent(table)}/query/`, { body });
  return res.arrayBuffer();
}

/** GET /metrics as text. */
export async function metricsText() {
  return (await request("GET", "/metrics")).text();
}
