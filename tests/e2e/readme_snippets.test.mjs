// The README's examples run green (issue 18, "the first hour of a new user": snippets that
// silently depended on each other). Every ```js block and every ```sh block that talks to a
// server is extracted from README.md and run against a fresh `strata serve`, each on its own
// (a block must be self-contained), with http://127.0.0.1:8080 replaced by the test server:
// - js: run with node from tests/e2e (the pinned clients). A line `console.log(EXPR); // VALUE`
//   whose VALUE is a JavaScript literal becomes an assertion that EXPR deep-equals VALUE (the
//   README's documented result); other lines run as written. The block must exit 0.
// - sh: run line by line in bash (a `\` continues a command). A `curl` command must answer 2xx,
//   or the status its trailing comment starts with (`# 404 ...`); when the comment is JSON
//   (`# {"version":3}`), the answer must equal it. A command of the CLI block
//   (S=build/release/strata) must exit 0.
// Blocks that cannot run here are named in SKIP with the reason (python: no Python client in
// the test environment; make: the build itself; S3: needs a radosgw).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, strataBin, REPO_ROOT } from "./lib/server.mjs";

const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const E2E_DIR = path.join(REPO_ROOT, "tests/e2e");
const DOC_URL = "http://127.0.0.1:8080";

/** The fenced code blocks: [{lang, code, line}] (line: 1-based line of the opening fence). */
function codeBlocks(text) {
  const out = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^```(\w*)\s*$/.exec(lines[i]);
    if (!m) continue;
    const start = i;
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j])) j++;
    out.push({ lang: m[1], code: lines.slice(start + 1, j).join("\n"), line: start + 1 });
    i = j;
  }
  return out;
}

const SKIP = [
  [(b) => b.lang === "python", "python: no Python LanceDB client in the test environment"],
  [(b) => b.lang === "sh" && /^make /m.test(b.code), "make: the build and test commands themselves"],
  [(b) => b.lang === "sh" && /s3-local/.test(b.code), "S3: needs a radosgw (make test-s3)"],
  [(b) => b.lang === "", "not code (a directory layout)"],
];

/** A JavaScript literal's value, or undefined when `text` is prose. */
function literal(text) {
  try {
    return { value: new Function(`return (${text});`)() };
  } catch {
    return undefined;
  }
}

/** The js block with its documented results turned into assertions: {source, checks}. */
function instrumentJs(code) {
  let checks = 0;
  const body = code
    .replaceAll(DOC_URL, "__STRATA_URL__")
    .split("\n")
    .map((line) => {
      const m = /^(\s*)console\.log\((.*)\);\s*\/\/\s*(.+?)\s*$/.exec(line);
      if (!m || literal(m[3]) === undefined) return line;
      checks++;
      return `${m[1]}__check(${m[2]}, ${JSON.stringify(m[3])});`;
    })
    .join("\n");
  const source = `import { deepStrictEqual as __deq } from "node:assert/strict";
function __check(actual, expected) {
  __deq(JSON.parse(JSON.stringify(actual)), JSON.parse(JSON.stringify(new Function("return (" + expected + ");")())),
    "documented result " + expected);
  console.log("checked:", expected);
}
${body}`;
  return { source, checks };
}

/**
 * Splits an sh block into commands, each with its trailing comment: a newline ends a command
 * unless it is inside quotes or escaped by `\`; `#` after a blank, outside quotes, starts a
 * comment that runs to the end of the line.
 */
function shCommands(code) {
  const cmds = [];
  let cmd = "";
  let comment = "";
  let q = null;
  let inComment = false;
  const finish = () => {
    if (cmd.trim()) cmds.push({ cmd: cmd.trim(), comment: comment.trim() });
    cmd = "";
    comment = "";
  };
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (inComment) {
      if (ch === "\n") {
        inComment = false;
        finish();
      } else if (cmd.trim()) {
        comment += ch;
      }
      continue;
    }
    if (q) {
      if (ch === q) q = null;
      cmd += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      q = ch;
      cmd += ch;
    } else if (ch === "\\" && code[i + 1] === "\n") {
      cmd += " ";
      i++;
    } else if (ch === "#" && /\s/.test(code[i - 1] ?? "\n")) {
      inComment = true;
    } else if (ch === "\n") {
      finish();
    } else {
      cmd += ch;
    }
  }
  finish();
  return cmds;
}

/**
 * Whether a JSON answer matches the documented one: equal, except that a documented string
 * holding "..." stands for any string with the same text around it ("...Z" = any timestamp).
 */
function matches(actual, expected) {
  if (typeof expected === "string" && expected.includes("...")) {
    const re = new RegExp("^" + expected.split("...").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$", "s");
    return typeof actual === "string" && re.test(actual);
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(actual[i], e));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    const keys = Object.keys(expected);
    return keys.length === Object.keys(actual).length && keys.every((k) => matches(actual[k], expected[k]));
  }
  return Object.is(actual, expected);
}

const blocks = codeBlocks(README);

test("README has the examples this test runs", () => {
  assert.ok(blocks.filter((b) => b.lang === "js").length >= 4);
  assert.ok(blocks.some((b) => b.lang === "sh" && /curl/.test(b.code)));
});

for (const block of blocks) {
  const skip = SKIP.find(([pred]) => pred(block));
  const name = `README.md:${block.line} (${block.lang || "text"})`;
  if (skip) {
    test(name, { skip: skip[1] }, () => {});
    continue;
  }
  test(name, { timeout: 180000 }, async (t) => {
    const server = await startServer();
    t.after(() => server.cleanup());
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "strata-readme-"));
    t.after(() => fs.rmSync(work, { recursive: true, force: true }));
    if (block.lang === "js") {
      const file = path.join(E2E_DIR, `.readme-block-${block.line}-${process.pid}.mjs`);
      const { source, checks } = instrumentJs(block.code);
      fs.writeFileSync(file, source.replaceAll("__STRATA_URL__", server.url));
      t.after(() => fs.rmSync(file, { force: true }));
      const r = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 150000 });
      assert.equal(r.status, 0, `${name} failed:\n${r.stdout}\n${r.stderr}\n${server.logTail(2000)}`);
      // Every documented result was compared (none skipped by an early exit).
      assert.equal((r.stdout.match(/^checked:/gm) ?? []).length, checks, r.stdout);
      return;
    }
    assert.equal(block.lang, "sh");
    const env = { ...process.env, STRATA_URL: server.url };
    const prelude = [`H=${server.url}`];
    for (const { cmd, comment } of shCommands(block.code)) {
      if (/^[A-Za-z_]+=/.test(cmd) && !/\s/.test(cmd.replace(/^[^=]+=/, ""))) {
        // A variable: H is the test server; S is the binary under test.
        if (cmd.startsWith("S=")) prelude.push(`S=${strataBin()}`);
        else if (!cmd.startsWith("H=")) prelude.push(cmd);
        continue;
      }
      if (/^curl /.test(cmd) && !/[|;&]/.test(cmd.replace(/'[^']*'/g, ""))) {
        const script = `${prelude.join("\n")}\n${cmd} -w '\\n%{http_code}'`;
        const out = execFileSync("bash", ["-c", script], { cwd: work, env, encoding: "utf8" });
        const nl = out.lastIndexOf("\n");
        const status = Number(out.slice(nl + 1));
        const bodyText = out.slice(0, nl);
        const want = /^(\d{3})\b/.exec(comment);
        if (want) {
          assert.equal(status, Number(want[1]), `${cmd}\n-> ${status} ${bodyText}`);
        } else {
          assert.ok(status >= 200 && status < 300, `${cmd}\n-> ${status} ${bodyText}`);
        }
        let expected;
        try {
          expected = JSON.parse(comment);
        } catch {
          expected = undefined;
        }
        if (expected !== undefined && !want) {
          const actual = JSON.parse(bodyText);
          assert.ok(matches(actual, expected), `${cmd}\n-> ${bodyText}\ndocumented: ${comment}`);
        }
        continue;
      }
      const r = spawnSync("bash", ["-c", `${prelude.join("\n")}\n${cmd}`], { cwd: work, env, encoding: "utf8" });
      assert.equal(r.status, 0, `${cmd}\n-> exit ${r.status}\n${r.stdout}\n${r.stderr}`);
    }
  });
}
