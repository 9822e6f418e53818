// The two systems `make bench-compare` measures, behind one shape so that every workload runs the
// same code against both: each `db` is an @lancedb/lancedb 0.31 Connection.
//
// - Strata (remote mode): `strata serve` on a loopback port (tests/e2e/lib/server.mjs), reached
//   through `lancedb.connect("db://bench", {apiKey, hostOverride})` — the client sends the
//   database name as the `x-lancedb-database` header (PROTOCOL.md §1). flush(table) calls
//   `POST /v1/table/{name}/flush/` (PROTOCOL.md route table) with fetch; post(table, route)
//   calls any other Strata route the SDK has no method for (compact/, index/{n}/stats/).
// - LanceDB OSS local: `lancedb.connect(dir)`; its second connection uses
//   `readConsistencyInterval: 0` so every read checks for the latest commit (LanceDB docs,
//   "Consistency": 0 = strong consistency across connections).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO, loadClients } from "../../scripts/lib/datasets.mjs";

const { StrataServer } = await import(pathToFileURL(path.join(REPO, "tests/e2e/lib/server.mjs")).href);

/** Database name Strata's connections use (becomes the data directory's database folder). */
export const STRATA_DB = "bench";

/**
 * Starts `strata serve` on a fresh data directory `dataDir` (created if missing, removed by
 * close()) and connects the LanceDB client to it.
 * Returns {system: "strata", db, connect(), flush(tableName), baseUrl, server, close()}.
 * flush resolves with the server's JSON answer plus `client_ms` (wall time seen by the caller);
 * it throws an Error with the status and body on any non-200 answer.
 */
export async function openStrata({ strataBin, dataDir, extraArgs = [] }) {
  const { lancedb } = loadClients();
  fs.mkdirSync(dataDir, { recursive: true });
  const server = new StrataServer({ bin: strataBin, dataDir, extraArgs });
  try {
    await server.start();
  } catch (e) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const baseUrl = server.url;
  const connect = () => lancedb.connect(`db://${STRATA_DB}`, { apiKey: "bench", hostOverride: baseUrl });
  const conns = [];
  const tracked = async () => {
    const c = await connect();
    conns.push(c);
    return c;
  };
  const db = await tracked();
  return {
    system: "strata",
    db,
    connect: tracked,
    baseUrl,
    server,
    async flush(tableName, body = {}) {
      const t0 = performance.now();
      const res = await fetch(`${baseUrl}/v1/table/${encodeURIComponent(tableName)}/flush/`, {
        method: "POST",
        headers: { "x-lancedb-database": STRATA_DB, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const client_ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`strata flush/ of ${tableName}: HTTP ${res.status}: ${text}`);
      return { ...JSON.parse(text), client_ms };
    },
    /**
     * POSTs `body` to `/v1/table/{tableName}/{route}` (e.g. "compact/", "index/vector_idx/stats/");
     * resolves with {status, json} (json null when the answer is not JSON). Never throws on a
     * status: the caller decides (compact/ answers 409 while a compaction runs).
     */
    async post(tableName, route, body = {}) {
      const res = await fetch(`${baseUrl}/v1/table/${encodeURIComponent(tableName)}/${route}`, {
        method: "POST",
        headers: { "x-lancedb-database": STRATA_DB, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      let json = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, json, text };
    },
    async close() {
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens LanceDB OSS local on directory `dir` (created if missing, removed by close()).
 * Returns {system: "lancedb", db, connect(), close()}; connect() opens a second connection
 * with readConsistencyInterval 0 (sees every commit of the first).
 */
export async function openLance({ dir }) {
  const { lancedb } = loadClients();
  fs.mkdirSync(dir, { recursive: true });
  const conns = [];
  const db = await lancedb.connect(dir);
  conns.push(db);
  return {
    system: "lancedb",
    db,
    dir,
    async connect() {
      const c = await lancedb.connect(dir, { readConsistencyInterval: 0 });
      conns.push(c);
      return c;
    },
    async close() {
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
