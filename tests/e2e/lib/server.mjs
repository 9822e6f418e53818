// Starts, stops, kills (-9) and restarts a `strata serve` process for end-to-end tests and the demo.
//
// Binary: env STRATA_BIN (ctest sets it), else <repo>/build/release/strata.
// Each server gets a free loopback port (`--port 0`; the port is read from the
// "strata listening on http://HOST:PORT" line the server prints on stdout) and, unless a data
// directory is given, a fresh temporary data directory that stop() removes.
// stderr is captured so that failures can show the server's last messages.
// Every child still running when this Node process exits (normally or through SIGINT/SIGTERM)
// is sent SIGKILL.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Repository root (tests/e2e/lib -> ../../..). */
export const REPO_ROOT = path.resolve(HERE, "../../..");

const LISTEN_RE = /strata listening on (http:\/\/[^\s:]+:(\d+))/;
const live = new Set();

function killAllSync() {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  live.clear();
}
process.on("exit", killAllSync);
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(sig, () => {
    killAllSync();
    process.exit(128 + (os.constants.signals[sig] ?? 1));
  });
}

/** Path of the strata binary: STRATA_BIN, or <repo>/build/release/strata. Throws if missing. */
export function strataBin(explicit) {
  const bin = path.resolve(explicit || process.env.STRATA_BIN || path.join(REPO_ROOT, "build/release/strata"));
  if (!fs.existsSync(bin)) {
    throw new Error(`strata binary not found at ${bin} (set STRATA_BIN or build build/release)`);
  }
  return bin;
}

/** One strata server process (restartable on the same data directory and, if free, the same port). */
export class StrataServer {
  /**
   * @param {object} [opts]
   * @param {string} [opts.bin] strata binary (default strataBin())
   * @param {string} [opts.dataDir] data directory (default: a new temp dir, removed by cleanup())
   * @param {string[]} [opts.extraArgs] more `strata serve` flags
   * @param {number} [opts.startTimeoutMs] how long to wait for the listening line (default 30 s)
   * @param {boolean} [opts.keepPort] restarts listen on the port of the first start (a client
   *   that must find the server again after a restart, e.g. the console in a browser)
   * @param {"local"|"s3"} [opts.store] where the data lives: "s3" = the bucket of the
   *   environment (STRATA_S3_*), "local" = the data directory; default STRATA_E2E_STORE
   */
  constructor(opts = {}) {
    this.bin = strataBin(opts.bin);
    this.ownsDataDir = !opts.dataDir;
    this.dataDir = opts.dataDir || fs.mkdtempSync(path.join(os.tmpdir(), "strata-e2e-"));
    this.extraArgs = opts.extraArgs || [];
    this.startTimeoutMs = opts.startTimeoutMs ?? 30000;
    this.keepPort = !!opts.keepPort;
    this.store = opts.store ?? (process.env.STRATA_E2E_STORE === "s3" ? "s3" : "local");
    this.child = null;
    this.port = 0;
    this.url = null;
    this.stderr = "";
    this.stdout = "";
    this.exitInfo = null;
  }

  /** Last `n` characters of the server's stderr (and stdout), for failure messages. */
  logTail(n = 4000) {
    const s = `--- strata stderr ---\n${this.stderr}\n--- strata stdout ---\n${this.stdout}`;
    return s.length > n ? "..." + s.slice(-n) : s;
  }

  /** True while the child process runs. */
  get running() {
    return this.child !== null && this.exitInfo === null;
  }

  /** Starts the server; resolves with the base URL once it prints its listening line. */
  async start() {
    if (this.running) throw new Error("strata server already running");
    this.stderr = "";
    this.stdout = "";
    this.exitInfo = null;
    const args = ["serve", "--data", this.dataDir, "--port", String(this.keepPort ? this.port : 0), "--host", "127.0.0.1", ...this.extraArgs];
    // store "s3" (STRATA_E2E_STORE=s3 in make test-s3): the data lives in the S3 bucket of the
    // environment (STRATA_S3_*), under a prefix named after the data directory, so a restart on
    // the same dataDir finds the same tables.
    if (this.store === "s3") {
      const bucket = process.env.STRATA_S3_BUCKET;
      if (!bucket || !process.env.STRATA_S3_ENDPOINT) {
        throw new Error("an S3 store needs STRATA_S3_ENDPOINT and STRATA_S3_BUCKET");
      }
      args.push("--store", `s3://${bucket}/e2e/${path.basename(this.dataDir)}`);
    }
    const child = spawn(this.bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    live.add(child);
    child.stderr.setEncoding("utf8");
    child.stdout.setEncoding("utf8");
    child.stderr.on("data", (d) => {
      this.stderr += d;
      if (this.stderr.length > 1 << 20) this.stderr = this.stderr.slice(-(1 << 19));
    });
    const exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        live.delete(child);
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    this.exited = exited;

    const url = await new Promise((resolve, reject) => {
      let done = false;
      const finish = (err, value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value);
      };
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(new Error(`strata did not print its listening line within ${this.startTimeoutMs} ms\n${this.logTail()}`));
      }, this.startTimeoutMs);
      child.stdout.on("data", (d) => {
        this.stdout += d;
        if (this.stdout.length > 1 << 20) this.stdout = this.stdout.slice(-(1 << 19));
        const m = LISTEN_RE.exec(this.stdout);
        if (m) finish(null, m[1]);
      });
      child.on("error", (e) => finish(new Error(`cannot run ${this.bin}: ${e.message}`)));
      exited.then(({ code, signal }) =>
        finish(new Error(`strata exited (code ${code}, signal ${signal}) before listening\n${this.logTail()}`)),
      );
    });
    this.url = url;
    this.port = Number(new URL(url).port);
    return url;
  }

  /** Graceful stop: SIGTERM, then SIGKILL after `timeoutMs`. Resolves with {code, signal}. */
  async stop(timeoutMs = 10000) {
    if (!this.running) return this.exitInfo;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child && this.child.kill("SIGKILL"), timeoutMs);
    const info = await this.exited;
    clearTimeout(timer);
    return info;
  }

  /** `kill -9`: no chance to flush or clean up. Resolves once the process is gone. */
  async kill9() {
    if (!this.running) return this.exitInfo;
    this.child.kill("SIGKILL");
    return this.exited;
  }

  /** Stops (gracefully unless `hard`) and starts again on the same data directory. */
  async restart({ hard = false } = {}) {
    if (hard) await this.kill9();
    else await this.stop();
    return this.start();
  }

  /** Stops the server (SIGKILL if needed) and removes the data directory if this object created it. */
  async cleanup() {
    await this.stop(5000);
    if (this.ownsDataDir && !process.env.STRATA_KEEP_DATA) {
      fs.rmSync(this.dataDir, { recursive: true, force: true });
    }
  }
}

/** Creates and starts a server; see StrataServer for options. */
export async function startServer(opts = {}) {
  const s = new StrataServer(opts);
  try {
    await s.start();
  } catch (e) {
    await s.cleanup();
    throw e;
  }
  return s;
}
