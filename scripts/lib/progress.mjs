// A one-line progress bar for long loads: done/total rows, rows/s and ETA.
// On a TTY the line is redrawn in place (\r); otherwise a line is printed every `step` of the
// total (default 10%), so logs and `make demo | tee` stay readable.

function fmtInt(n) {
  return Math.round(n).toLocaleString("en-US");
}

function fmtSeconds(s) {
  if (!Number.isFinite(s)) return "?";
  if (s < 60) return `${s.toFixed(0)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export class Progress {
  /**
   * @param {string} label printed before the figures, e.g. "load fashion_mnist"
   * @param {number} total rows expected
   * @param {object} [opts]
   * @param {NodeJS.WriteStream} [opts.stream] default process.stdout
   * @param {number} [opts.step] fraction between lines when not a TTY (default 0.1)
   * @param {string} [opts.unit] default "rows"
   */
  constructor(label, total, { stream = process.stdout, step = 0.1, unit = "rows" } = {}) {
    this.label = label;
    this.total = total;
    this.stream = stream;
    this.tty = Boolean(stream.isTTY);
    this.step = step;
    this.unit = unit;
    this.start = performance.now();
    this.nextMark = step;
    this.done = 0;
  }

  /** Seconds since the bar was created. */
  get seconds() {
    return (performance.now() - this.start) / 1000;
  }

  line() {
    const s = this.seconds;
    const rate = s > 0 ? this.done / s : 0;
    const frac = this.total > 0 ? this.done / this.total : 1;
    const width = 24;
    const filled = Math.min(width, Math.round(frac * width));
    const bar = "#".repeat(filled) + ".".repeat(width - filled);
    const eta = rate > 0 ? (this.total - this.done) / rate : Infinity;
    return `  ${this.label} [${bar}] ${fmtInt(this.done)}/${fmtInt(this.total)} ${this.unit}, ` +
      `${fmtInt(rate)} ${this.unit}/s, ${this.done >= this.total ? `${s.toFixed(1)} s` : `ETA ${fmtSeconds(eta)}`}`;
  }

  /** Sets the number of rows done and redraws (TTY) or prints a line at each step. */
  update(done) {
    this.done = done;
    if (this.tty) {
      this.stream.write(`\r${this.line()}\x1b[K`);
    } else if (this.total > 0 && done / this.total + 1e-9 >= this.nextMark) {
      this.stream.write(`${this.line()}\n`);
      while (this.nextMark <= done / this.total + 1e-9) this.nextMark += this.step;
    }
  }

  /** Ends the bar (newline on a TTY); returns the elapsed seconds. */
  finish() {
    if (this.tty) this.stream.write(`\r${this.line()}\x1b[K\n`);
    return this.seconds;
  }
}
