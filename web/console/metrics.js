// Live series from the server's /metrics (Prometheus text), kept in the page: rates of counters
// over each sampling interval, query latency quantiles from the histogram buckets' increase.

const MAX_SAMPLES = 300;

/** Parses Prometheus text: [{name, labels: {..}, value}]. */
export function parsePrometheus(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

function sum(samples, name) {
  let s = 0;
  for (const x of samples) if (x.name === name) s += x.value;
  return s;
}

// Query-latency histogram: cumulative counts by upper bound, summed over tables and kinds.
function buckets(samples) {
  const m = new Map();
  for (const x of samples) {
    if (x.name !== "strata_query_duration_seconds_bucket") continue;
    const le = x.labels.le === "+Inf" ? Infinity : Number(x.labels.le);
    m.set(le, (m.get(le) || 0) + x.value);
  }
  return [...m.entries()].sort((a, b) => a[0] - b[0]);
}

// The q-quantile (seconds) of the increase between two bucket snapshots, interpolated within
// the bucket as Prometheus' histogram_quantile does; null without observations.
function quantile(q, before, after) {
  const prev = new Map(before);
  const inc = after.map(([le, c]) => [le, c - (prev.get(le) || 0)]);
  const total = inc.length ? inc[inc.length - 1][1] : 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const [le, c] of inc) {
    if (c >= rank) {
      if (le === Infinity) return lowerLe;
      return lowerLe + ((le - lowerLe) * (rank - lowerCount)) / Math.max(c - lowerCount, 1e-12);
    }
    lowerLe = le;
    lowerCount = c;
  }
  return lowerLe;
}

export class MetricsCollector {
  constructor(fetchText, intervalMs = 2000) {
    this.fetchText = fetchText;
    this.intervalMs = intervalMs;
    this.series = { t: [], puts: [], rows: [], queries: [], p50: [], p99: [], flushMs: [], bpWaits: [] };
    this.last = null;
    this.timer = null;
    this.error = "";
  }
  start() {
    if (this.timer) return;
    const tick = async () => {
      try {
        await this.sample();
        this.error = "";
      } catch (e) {
        this.error = e.status === 401 ? "401 unauthorized" : String(e.message || e);
      }
      if (this.timer) this.timer = setTimeout(tick, this.intervalMs);
    };
    this.timer = setTimeout(tick, 0);
  }
  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    this.last = null;
  }
  async sample() {
    const samples = parsePrometheus(await this.fetchText());
    const now = {
      t: Date.now(),
      puts: sum(samples, "strata_puts_total"),
      rows: sum(samples, "strata_rows_written_total"),
      queries: sum(samples, "strata_queries_total"),
      flushSum: sum(samples, "strata_flush_duration_seconds_sum"),
      flushCount: sum(samples, "strata_flush_duration_seconds_count"),
      bpWaits: sum(samples, "strata_backpressure_waits_total"),
      buckets: buckets(samples),
    };
    const last = this.last;
    this.last = now;
    // A restart resets the counters: start over from this sample.
    if (!last || now.puts < last.puts || now.queries < last.queries) return;
    const dt = (now.t - last.t) / 1000;
    const s = this.series;
    const push = (key, v) => {
      s[key].push(v);
      if (s[key].length > MAX_SAMPLES) s[key].shift();
    };
    push("t", now.t);
    push("puts", (now.puts - last.puts) / dt);
    push("rows", (now.rows - last.rows) / dt);
    push("queries", (now.queries - last.queries) / dt);
    const p50 = quantile(0.5, last.buckets, now.buckets);
    const p99 = quantile(0.99, last.buckets, now.buckets);
    push("p50", p50 === null ? null : p50 * 1000);
    push("p99", p99 === null ? null : p99 * 1000);
    const fc = now.flushCount - last.flushCount;
    push("flushMs", fc > 0 ? ((now.flushSum - last.flushSum) / fc) * 1000 : null);
    push("bpWaits", (now.bpWaits - last.bpWaits) / dt);
  }
}

/** A line chart of (t, y) on a canvas; null values are gaps. */
export function drawChart(canvas, title, ts, ys, unit = "") {
  const ctx = canvas.getContext("2d");
  const w = canvas.width;
  const h = canvas.height;
  const pad = { l: 48, r: 10, t: 22, b: 18 };
  ctx.clearRect(0, 0, w, h);
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = "#1d2330";
  // The latest value, or for sparse series (flushes) the latest there is.
  const lastY = ys.findLast((v) => v !== null) ?? null;
  const fmt = (v) => (v === null ? "–" : v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2));
  ctx.fillText(`${title}: ${fmt(lastY)}${lastY === null ? "" : unit}`, pad.l, 14);
  const vals = ys.filter((v) => v !== null);
  const max = Math.max(0, ...vals) * 1.1 || 1;
  ctx.strokeStyle = "#d9dde5";
  ctx.beginPath();
  ctx.moveTo(pad.l, pad.t);
  ctx.lineTo(pad.l, h - pad.b);
  ctx.lineTo(w - pad.r, h - pad.b);
  ctx.stroke();
  ctx.fillStyle = "#6b7280";
  ctx.fillText(fmt(max), 4, pad.t + 8);
  ctx.fillText("0", 4, h - pad.b);
  if (ts.length < 2) {
    ctx.fillText("collecting…", pad.l + 10, h / 2);
    return;
  }
  const t0 = ts[0];
  const t1 = ts[ts.length - 1];
  ctx.fillText(`last ${Math.round((t1 - t0) / 1000)} s`, w - pad.r - 70, h - 4);
  const x = (t) => pad.l + ((t - t0) / Math.max(t1 - t0, 1)) * (w - pad.l - pad.r);
  const y = (v) => h - pad.b - (v / max) * (h - pad.t - pad.b);
  ctx.strokeStyle = "#2456c7";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < ts.length; i++) {
    if (ys[i] === null) {
      pen = false;
      continue;
    }
    if (pen) ctx.lineTo(x(ts[i]), y(ys[i]));
    else ctx.moveTo(x(ts[i]), y(ys[i]));
    pen = true;
  }
  ctx.stroke();
  // Points without a neighbour (e.g. one flush in a minute) as dots.
  ctx.fillStyle = "#2456c7";
  for (let i = 0; i < ts.length; i++) {
    if (ys[i] === null || (ys[i - 1] ?? null) !== null || (ys[i + 1] ?? null) !== null) continue;
    ctx.beginPath();
    ctx.arc(x(ts[i]), y(ys[i]), 2.5, 0, 2 * Math.PI);
    ctx.fill();
  }
}
