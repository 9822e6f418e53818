// End-to-end: the web console (/console/, README "Console") in a real browser: Debian's
// chromium, headless, driven by playwright-core (pinned in package.json). A server with an API
// key and a table of known rows (created with the LanceDB SDK); the test logs in with the key and
// checks, with real values: the table list shows the exact row count and follows an insert
// (live); the LSM view's flush shows the generation the flush sealed, and that generation then
// appears among the SSTables as mem_wal/describe/ reports them, and compact merges them into the
// base table; the query console returns the
// row whose vector was pasted first (distance 0) and the explain_plan/ text; "use row N's
// vector" fills a vector that finds its own row; "check recall" compares the index with exact
// search; the row browser pages and filters with exact
// counts; the versions page lists exactly the versions and tags the REST API lists, creates a
// tag on a chosen version and deletes it (as tags/list/ then reports), shows the server's 4xx
// message, and restores only after a confirmation (the current version answers itself; an
// older one is the server's 400 and leaves rows and version as they were); the metrics page
// collects samples; no console errors are logged. Then a server
// restart (the page shows "unreachable" and recovers by itself) and a wrong key (the page shows
// the 401). Screenshots of each page go to <build dir>/console-screenshots/.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { chromium } from "playwright-core";
import { startServer, strataBin } from "./lib/server.mjs";
import { randomVector, rng } from "./lib/vectors.mjs";

const KEY = "console-test-key";
const TABLE = "products";
const ROWS = 237;
const DIM = 16;
const CHROMIUM = process.env.STRATA_CHROMIUM || "/usr/bin/chromium";
const SHOTS = path.join(path.dirname(strataBin()), "console-screenshots");

const rand = rng(18);
const rows = Array.from({ length: ROWS }, (_, i) => ({
  id: i,
  label: `product ${i} ${["red", "green", "blue"][i % 3]}`,
  vector: randomVector(rand, DIM),
}));

describe("web console in headless chromium", () => {
  let server;
  let browser;
  let page;
  const errors = []; // console errors and page exceptions of the main session

  async function rest(op, body = {}) {
    const res = await fetch(`${server.url}/v1/table/${TABLE}/${op}/`, {
      method: "POST",
      headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${op}/: ${text}`);
    return JSON.parse(text);
  }
  // A route's status and parsed answer, whatever the status (for the 4xx the page must show).
  async function restRaw(op, body = {}) {
    const res = await fetch(`${server.url}/v1/table/${TABLE}/${op}/`, {
      method: "POST",
      headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: JSON.parse(await res.text()) };
  }
  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    assert.ok(
      fs.existsSync(CHROMIUM),
      `${CHROMIUM} not found: scripts/install-deps installs Debian's chromium (or set STRATA_CHROMIUM)`,
    );
    fs.mkdirSync(SHOTS, { recursive: true });
    server = await startServer({ extraArgs: ["--api-key", KEY], keepPort: true });
    const db = await lancedb.connect("db://default", { apiKey: KEY, hostOverride: server.url });
    const t = await db.createTable(TABLE, rows);
    await t.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "l2" }) });
    assert.equal(await t.countRows(), ROWS);
    // Root in a container: chromium's sandbox needs user namespaces it may not have.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()} ${JSON.stringify(m.location())}`);
    });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  });

  after(async () => {
    if (browser) await browser.close();
    if (server) await server.cleanup();
  });

  test("login, table list with the exact row count, live", async () => {
    const res = await fetch(`${server.url}/console/`);
    assert.equal(res.status, 200, "the console's files need no key");
    assert.match(res.headers.get("content-type"), /text\/html/);
    await page.goto(`${server.url}/console/`);
    await page.fill("#key", KEY);
    await page.click("#login-btn");
    const rowsCell = page.locator(`#tables tr[data-table="${TABLE}"] td.rows`);
    await rowsCell.waitFor();
    assert.equal(await rowsCell.textContent(), String(ROWS));
    const indexes = await page.locator(`#tables tr[data-table="${TABLE}"]`).textContent();
    assert.match(indexes, new RegExp(`vector_idx \\(IVF_HNSW_SQ on vector\\): ${ROWS} indexed, 0 unindexed`));
    // Live: three more rows show up without a reload (the list refreshes every 3 s).
    await rest("insert", [0, 1, 2].map((i) => ({ id: 1000 + i, label: `late ${i}`, vector: rows[i].vector })));
    await page.waitForFunction(
      ([sel, want]) => document.querySelector(sel)?.textContent === want,
      [`#tables tr[data-table="${TABLE}"] td.rows`, String(ROWS + 3)],
      { timeout: 15000 },
    );
    await shot("tables");
  });

  test("LSM view: flush shows the generation it sealed, which then is an SSTable", async () => {
    const before = await rest("mem_wal/describe");
    const activeGen = before.shards[0].active.generation;
    assert.ok(before.shards[0].active.rows > 0, "rows in the active MemTable before the flush");
    await page.goto(`${server.url}/console/#/lsm/${TABLE}`);
    await page.locator("#writer-epoch").waitFor();
    assert.equal(await page.textContent("#writer-epoch"), String(before.shards[0].writer_epoch));
    await page.click("#flush-btn");
    const result = page.locator("#flush-result");
    await result.waitFor({ timeout: 60000 });
    const text = await result.textContent();
    const m = text.match(/sealed generation (\d+) and waited until generation (\d+)/);
    assert.ok(m, `flush result: ${text}`);
    assert.equal(Number(m[1]), activeGen, "the flush sealed the generation that was active");
    // The page refreshed after the flush: that generation is now among its SSTables, as the
    // server describes them.
    await page.locator(`#sstables tr[data-generation="${activeGen}"]`).waitFor({ timeout: 10000 });
    const afterDesc = await rest("mem_wal/describe");
    assert.ok(afterDesc.shards[0].sstables.some((s) => s.generation === activeGen));
    assert.equal(afterDesc.shards[0].current_generation, activeGen + 1);
    await page.waitForFunction((g) => document.querySelector("#current-generation")?.textContent === String(g), activeGen + 1);
    await shot("lsm");

    // Compact merges the waiting SSTables into the base table; the page shows which and the
    // base table then says it is compacted through the last of them.
    const waiting = afterDesc.shards[0].sstables.map((s) => s.generation);
    await page.click("#compact-btn");
    const compacted = page.locator("#compact-result");
    await compacted.waitFor({ timeout: 60000 });
    const ctext = await compacted.textContent();
    assert.match(ctext, new RegExp(`^Compact: generations ${waiting.join(", ")} merged into base version \\d+: ${ROWS + 3} rows in`));
    const last = waiting[waiting.length - 1];
    await page.waitForFunction((g) => document.querySelector("#compacted-generation")?.textContent === `gen ${g}`, last);
    assert.deepEqual((await rest("mem_wal/describe")).base.compacted_generation, { [afterDesc.shards[0].shard_id]: last });
  });

  test("query console: a pasted vector finds its row first; explain_plan text", async () => {
    const target = rows[123];
    await page.goto(`${server.url}/console/#/query/${TABLE}`);
    await page.locator("#vector").waitFor();
    await page.fill("#vector", JSON.stringify(target.vector));
    await page.fill("#k", "5");
    await page.click("#run-query");
    await page.locator("#results tbody tr").first().waitFor();
    const headers = await page.locator("#results thead th").allTextContents();
    const firstRow = await page.locator("#results tbody tr").first().locator("td").allTextContents();
    const byName = Object.fromEntries(headers.map((h, i) => [h, firstRow[i]]));
    assert.equal(byName.id, "123");
    assert.equal(byName.label, target.label);
    assert.equal(Number(byName._distance), 0);
    assert.match(byName.vector, new RegExp(`^dim ${DIM} · ‖v‖ `));
    assert.equal(await page.locator("#results tbody tr").count(), 5);
    const plan = await page.textContent("#plan");
    assert.match(plan, /VectorSearch/);
    assert.match(plan, new RegExp(`Strata plan for table '${TABLE}'`));
    await shot("query");

    // "use row N's vector": the vector of row 7 (scan order) finds that row at distance 0.
    await page.fill("#row-n", "7");
    await page.click("#use-row");
    await page.waitForFunction(() => document.querySelector("#vector").value.startsWith("["));
    const pasted = JSON.parse(await page.inputValue("#vector"));
    assert.equal(pasted.length, DIM);
    await page.click("#run-query");
    await page.waitForFunction(() => /\d+ rows? in /.test(document.querySelector("#query-note").textContent));
    const d0 = await page.locator("#results tbody tr").first().locator("td").allTextContents();
    const h0 = await page.locator("#results thead th").allTextContents();
    assert.equal(Number(d0[h0.indexOf("_distance")]), 0);

    // "check recall": 20 sample rows' vectors, the index's top 10 against the exact top 10.
    await page.fill("#k", "10");
    await page.click("#check-recall");
    await page.waitForFunction(() => /^recall@/.test(document.querySelector("#recall-result").textContent), null, { timeout: 30000 });
    const recall = await page.textContent("#recall-result");
    const rm = recall.match(/^recall@10 over 20 queries \(sample rows' own vectors\): mean ([0-9.]+), min ([0-9.]+)/);
    assert.ok(rm, recall);
    assert.ok(Number(rm[1]) >= 0.9, `HNSW recall@10 on ${ROWS + 3} rows: ${recall}`);
  });

  test("row browser: pages and filters with exact counts", async () => {
    await page.goto(`${server.url}/console/#/rows/${TABLE}`);
    const pos = page.locator("#row-position");
    await page.waitForFunction(() => /rows 1–20 of/.test(document.querySelector("#row-position")?.textContent ?? ""));
    assert.equal(await pos.textContent(), `rows 1–20 of ${ROWS + 3}`);
    assert.equal(await page.locator("#rows tbody tr").count(), 20);
    await page.click("#next-page");
    await page.waitForFunction(() => /rows 21–40/.test(document.querySelector("#row-position").textContent));
    await page.fill("#row-filter", "id < 5 OR id >= 1000");
    await page.press("#row-filter", "Enter");
    await page.waitForFunction(() => /matching/.test(document.querySelector("#row-position").textContent));
    assert.equal(await pos.textContent(), "rows 1–8 of 8 matching");
    const cells = await page.locator("#rows tbody tr").first().locator("td").allTextContents();
    assert.ok(cells.some((c) => /^dim 16 · ‖v‖ [0-9.]+ · \[/.test(c)), `a vector summary in ${cells}`);
    await shot("rows");
  });

  test("versions page: the REST API's versions and tags; create and delete a tag; restore", async () => {
    const errorsBefore = errors.length;
    // Three inserts, three new versions.
    const start = (await rest("describe")).version;
    const versions = [];
    for (let i = 0; i < 3; i++) {
      const r = await rest("insert", [{ id: 2000 + i, label: `versioned ${i}`, vector: rows[i].vector }]);
      versions.push(r.version);
    }
    assert.ok(versions[0] > start && versions[1] > versions[0] && versions[2] > versions[1], `versions ${start} -> ${versions}`);
    const cur = versions[2];
    assert.equal((await rest("describe")).version, cur);
    const liveRows = ROWS + 3 + 3;
    assert.equal(await rest("count_rows"), liveRows);

    // The table list links to the page.
    await page.goto(`${server.url}/console/#/tables`);
    await page.click(`#tables tr[data-table="${TABLE}"] a[href="#/versions/${TABLE}"]`);
    await page.locator("#versions tbody tr").first().waitFor();
    assert.equal(await page.getAttribute("#nav a.active", "data-page"), "versions");

    // The page lists exactly what version/list/ lists: number, timestamp, metadata.
    const listed = (await rest("version/list")).versions;
    assert.ok(listed.some((v) => v.version === cur), JSON.stringify(listed));
    const shown = await page.$$eval("#versions tbody tr", (trs) =>
      trs.map((tr) => ({
        version: Number(tr.dataset.version),
        timestamp: tr.querySelector("td.ts").textContent,
        metadata: tr.children[3].textContent,
      })),
    );
    const metaText = (m) => (Object.keys(m).length === 0 ? "none" : Object.entries(m).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(""));
    assert.deepEqual(
      shown,
      listed.map((v) => ({ version: v.version, timestamp: v.timestamp, metadata: metaText(v.metadata) })),
    );
    assert.match(shown[shown.length - 1].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(await page.textContent("#current-version"), String(cur));
    assert.equal(await page.textContent("#version-count"), String(listed.length));
    assert.equal(await page.textContent("#no-tags"), "no tags");
    assert.deepEqual(await rest("tags/list"), {});

    // A tag on the version before the inserts, typed into the form.
    await page.fill("#tag-name", "before-inserts");
    await page.fill("#tag-version", String(start));
    await page.click("#create-tag");
    await page.waitForFunction(() => /created/.test(document.querySelector("#tag-result")?.textContent ?? ""));
    assert.equal(await page.textContent("#tag-result"), `Tag “before-inserts” created on version ${start}.`);
    let tags = await rest("tags/list");
    assert.deepEqual(Object.keys(tags), ["before-inserts"]);
    assert.equal(tags["before-inserts"].version, start);
    await page.locator('#tags tr[data-tag="before-inserts"]').waitFor();
    assert.equal(await page.textContent('#tags tr[data-tag="before-inserts"] td.tag-version'), String(start));

    // A tag on the current version from its row's "tag…" button (Enter submits).
    await page.click(`#versions tr[data-version="${cur}"] .tag-this`);
    assert.equal(await page.inputValue("#tag-version"), String(cur));
    await page.fill("#tag-name", "latest");
    await page.press("#tag-name", "Enter");
    await page.waitForFunction(() => /“latest” created/.test(document.querySelector("#tag-result")?.textContent ?? ""));
    tags = await rest("tags/list");
    assert.deepEqual(Object.keys(tags).sort(), ["before-inserts", "latest"]);
    assert.equal(tags.latest.version, cur);
    await page.waitForFunction((v) => document.querySelector(`#versions tr[data-version="${v}"]`)?.children[4].textContent === "latest", cur);
    assert.equal(await page.textContent("#tag-count"), "2");

    // The same tag again: the server's 400 message, in the page.
    await page.fill("#tag-name", "latest");
    await page.click("#create-tag");
    await page.locator("#version-action .err").waitFor();
    const dup = await restRaw("tags/create", { tag: "latest", version: cur });
    assert.equal(dup.status, 400);
    assert.match(dup.json.message, /already exists/);
    assert.equal(await page.textContent("#version-action"), `400 ${dup.json.error}: ${dup.json.message}`);

    // Restore, dismissed: nothing is sent (the action line still shows the 400 above).
    let dialog = null;
    await page.fill("#restore-version", String(start));
    page.once("dialog", (d) => {
      dialog = d.message();
      d.dismiss();
    });
    await page.click("#restore-btn");
    await page.waitForTimeout(300);
    assert.match(dialog, /^Restore table/);
    assert.equal(await page.textContent("#version-action"), `400 ${dup.json.error}: ${dup.json.message}`);
    dialog = null;

    // Restore of an older version, confirmed: Strata keeps only the current version (README
    // "Limits"), so the server answers 400 and the page shows it; rows and version unchanged.
    page.once("dialog", (d) => {
      dialog = d.message();
      d.accept();
    });
    await page.click("#restore-btn");
    await page.locator("#version-action .err").waitFor();
    assert.match(dialog, new RegExp(`^Restore table “${TABLE}” to version ${start}\\?`));
    const older = await restRaw("restore", { version: start });
    assert.equal(older.status, 400);
    assert.match(older.json.message, /time travel is not supported yet/);
    assert.equal(await page.textContent("#version-action"), `400 ${older.json.error}: ${older.json.message}`);
    assert.equal(await rest("count_rows"), liveRows);
    assert.equal((await rest("describe")).version, cur);
    await shot("versions");

    // Restore of the current version from its row: the page shows the version the server answers.
    page.once("dialog", (d) => d.accept());
    await page.click(`#versions tr[data-version="${cur}"] .restore-this`);
    await page.locator("#restore-result").waitFor();
    assert.deepEqual(await rest("restore", { version: cur }), { version: cur });
    assert.equal(await page.textContent("#restore-result"), `Restore of version ${cur}: the table is at version ${cur}.`);
    assert.equal(await rest("count_rows"), liveRows);

    // Delete a tag (after a confirmation): tags/list/ no longer has it.
    page.once("dialog", (d) => {
      dialog = d.message();
      d.accept();
    });
    await page.click('#tags tr[data-tag="before-inserts"] .delete-tag');
    await page.waitForFunction(() => /deleted/.test(document.querySelector("#tag-result")?.textContent ?? ""));
    assert.equal(dialog, `Delete the tag “before-inserts” (version ${start}) of table “${TABLE}”?`);
    tags = await rest("tags/list");
    assert.deepEqual(Object.keys(tags), ["latest"]);
    assert.equal(tags.latest.version, cur);
    // The page shows "deleted" before it reloads the lists: wait for the row to go (a clean-clone
    // run counted it while the reload was still in flight).
    await page.locator('#tags tr[data-tag="before-inserts"]').waitFor({ state: "detached", timeout: 10000 });
    assert.equal(await page.locator('#tags tr[data-tag="before-inserts"]').count(), 0);

    // The only console errors: chromium's notes of the two 400 answers the page showed.
    const mine = errors.splice(errorsBefore);
    assert.equal(mine.length, 2, mine.join("\n"));
    assert.match(mine[0], /status of 400.*\/tags\/create\//);
    assert.match(mine[1], /status of 400.*\/restore\//);

    // Back to the rows the later tests expect.
    assert.equal((await rest("delete", { predicate: "id >= 2000 AND id < 2003" })).num_deleted_rows, 3);
    assert.equal(await rest("count_rows"), ROWS + 3);
  });

  test("metrics page collects samples from /metrics; no console errors so far", async () => {
    await page.goto(`${server.url}/console/#/metrics`);
    await page.waitForFunction(() => /^([3-9]|\d\d+) samples/.test(document.querySelector("#main p")?.textContent ?? ""), null, {
      timeout: 20000,
    });
    assert.equal(await page.locator("canvas[data-metric]").count(), 7);
    await shot("metrics");
    assert.deepEqual(errors, []);
  });

  test("a server restart: the page says unreachable, then recovers by itself", async () => {
    await page.goto(`${server.url}/console/#/tables`);
    await page.locator(`#tables tr[data-table="${TABLE}"] td.rows`).waitFor();
    await server.stop();
    await page.waitForFunction(() => /unreachable/.test(document.querySelector("#banner").textContent), null, { timeout: 15000 });
    await server.start();
    await page.waitForFunction(
      ([sel, want]) => document.querySelector(sel)?.textContent === want && !/unreachable/.test(document.querySelector("#banner").textContent),
      [`#tables tr[data-table="${TABLE}"] td.rows`, String(ROWS + 3)],
      { timeout: 20000 },
    );
    // The only errors: the browser's own notes of the refused connections.
    const other = errors.filter((e) => !/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE/.test(e));
    assert.deepEqual(other, []);
  });

  test("a wrong key shows the 401", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 500 } });
    const p = await ctx.newPage();
    const pageErrors = [];
    p.on("pageerror", (e) => pageErrors.push(e.message));
    await p.goto(`${server.url}/console/`);
    await p.fill("#key", "not-the-key");
    await p.click("#login-btn");
    const bannerText = await p.waitForFunction(() => {
      const b = document.querySelector("#banner");
      return !b.hidden && b.textContent;
    });
    const text = await bannerText.jsonValue();
    assert.match(text, /^401 Unauthorized: invalid x-api-key header/);
    await p.screenshot({ path: path.join(SHOTS, "wrong-key.png") });
    assert.deepEqual(pageErrors, []);
    await ctx.close();
  });
});
