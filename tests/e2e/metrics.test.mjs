// End-to-end: GET /metrics of `strata serve` scraped before and after writes and a vector
// search made with the real LanceDB Node client (@lancedb/lancedb 0.31.0, remote mode). Every
// line must parse as Prometheus text exposition format 0.0.4, and the per-table counters must
// move by exactly what the client did.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./lib/server.mjs";

const DIM = 4;
const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE_RE = new RegExp(`^(${NAME})(\\{(?:${LABEL})(?:,${LABEL})*,?\\})? (\\S+)$`);
const TYPE_RE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const HELP_RE = new RegExp(`^# HELP (${NAME}) .*$`);
const VALUE_RE = /^(?:[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|\+Inf|-Inf|NaN)$/;

/**
 * Parses Prometheus text 0.0.4 strictly: every line is a HELP, a TYPE or a sample of the family
 * named by the last TYPE line. Returns { values: Map(series -> number), types: Map(family -> type) }.
 */
function parseProm(text) {
  assert.ok(text.endsWith("\n"), "exposition ends with a newline");
  const values = new Map();
  const types = new Map();
  let family = null;
  for (const line of text.slice(0, -1).split("\n")) {
    let m;
    if (line.startsWith("# HELP")) {
      assert.match(line, HELP_RE);
    } else if (line.startsWith("# TYPE")) {
      m = TYPE_RE.exec(line);
      assert.ok(m, `bad TYPE line: ${line}`);
      assert.ok(!types.has(m[1]), `family declared twice: ${m[1]}`);
      family = m[1];
      types.set(family, m[2]);
    } else {
      m = SAMPLE_RE.exec(line);
      assert.ok(m, `bad sample line: ${JSON.stringify(line)}`);
      assert.match(m[3], VALUE_RE, `bad value in ${line}`);
      const name = m[1];
      if (types.get(family) === "histogram") {
        assert.ok([`${family}_bucket`, `${family}_sum`, `${family}_count`].includes(name), line);
      } else {
        assert.equal(name, family, `sample outside its family: ${line}`);
      }
      const key = name + (m[2] ?? "");
      assert.ok(!values.has(key), `duplicate series ${key}`);
      values.set(key, m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]));
    }
  }
  return { values, types };
}

describe("GET /metrics with the LanceDB client", () => {
  let server;
  let db;
  const scrape = async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { "x-api-key": "x" } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
    return parseProm(await res.text());
  };
  const T = '{database="e2e",table="mt"}';
  const rows = (first, n) =>
    Array.from({ length: n }, (_, i) => ({ id: first + i, vector: [first + i, 0, 0, 0] }));

  before(async () => {
    server = await startServer();
    db = await lancedb.connect("db://e2e", { apiKey: "x", hostOverride: server.url });
  });
  after(async () => {
    if (server) await server.cleanup();
  });

  test("writes and a vector search move the counters by exact amounts", async () => {
    const table = await db.createTable("mt", rows(0, 4));
    const before = await scrape();
    assert.equal(before.types.get("strata_puts_total"), "counter");
    assert.equal(before.types.get("strata_wal_group_size"), "histogram");
    assert.equal(before.types.get("strata_query_duration_seconds"), "histogram");
    assert.equal(before.values.get(`strata_table_rows${T}`), 4);

    const ADDS = 3;
    const PER = 5;
    for (let i = 0; i < ADDS; i++) await table.add(rows(100 + i * PER, PER));
    const hits = await table.search([101, 0, 0, 0]).limit(2).toArray();
    assert.deepEqual(
      hits.map((r) => Number(r.id)),
      [101, 100],
    );

    const afterScrape = await scrape();
    const delta = (key) => (afterScrape.values.get(key) ?? NaN) - (before.values.get(key) ?? 0);
    assert.equal(delta(`strata_puts_total${T}`), ADDS);
    assert.equal(delta(`strata_rows_written_total${T}`), ADDS * PER);
    assert.equal(delta(`strata_wal_entries_total${T}`), ADDS);
    assert.equal(delta(`strata_wal_appends_total${T}`), ADDS);
    assert.equal(delta(`strata_wal_fsyncs_total${T}`), ADDS);
    assert.equal(delta(`strata_wal_group_size_count${T}`), ADDS);
    assert.equal(afterScrape.values.get(`strata_table_rows${T}`), 4 + ADDS * PER);
    assert.ok(
      afterScrape.values.get(`strata_table_version${T}`) > before.values.get(`strata_table_version${T}`),
    );
    const VQ = '{database="e2e",table="mt",kind="vector"}';
    assert.equal(delta(`strata_queries_total${VQ}`), 1);
    assert.equal(delta(`strata_query_duration_seconds_count${VQ}`), 1);
    assert.equal(
      afterScrape.values.get(`strata_query_duration_seconds_bucket{database="e2e",table="mt",kind="vector",le="+Inf"}`),
      afterScrape.values.get(`strata_query_duration_seconds_count${VQ}`),
    );
    assert.equal(delta('strata_http_requests_total{action="insert",status="2xx"}'), ADDS);
    assert.ok(afterScrape.values.get("strata_process_uptime_seconds") >= 0);

    // Every histogram: cumulative buckets ending in +Inf = _count.
    for (const [family, type] of afterScrape.types) {
      if (type !== "histogram") continue;
      const series = new Map();
      for (const [key, value] of afterScrape.values) {
        if (!key.startsWith(`${family}_bucket{`)) continue;
        // `le` is the last label; match it after `{` or `,` (not inside e.g. `table="..."`).
        const le = /([{,])le="([^"]*)"/.exec(key);
        const id = key.slice(0, le.index + (le[1] === "{" ? 1 : 0)) + key.slice(le.index + le[0].length);
        if (!series.has(id)) series.set(id, []);
        series.get(id).push([le[2], value]);
      }
      for (const [id, buckets] of series) {
        for (let i = 1; i < buckets.length; i++) {
          assert.ok(buckets[i][1] >= buckets[i - 1][1], `${id} not cumulative at le=${buckets[i][0]}`);
        }
        assert.equal(buckets.at(-1)[0], "+Inf", id);
        const labels = id.slice(`${family}_bucket`.length).replace(/^\{\}$/, "");
        assert.equal(afterScrape.values.get(`${family}_count${labels}`), buckets.at(-1)[1], id);
      }
    }
  });
});
