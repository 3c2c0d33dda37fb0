// Shared helpers of the benchmark drivers (scripts/bench.mjs, scripts/bench-tools.mjs): option
// parsing, child bookkeeping, the NDJSON child wrapper, /proc readers, statistics and output.
// Node 18+, node: built-ins only. The bare baseline processes do not import this file (see
// scripts/bench/ndjson-loop.mjs for what they share).
import { spawn, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, arch, platform } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConnection } from 'node:net';
import { performance } from 'node:perf_hooks';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_CLAW = join(ROOT, 'dist', 'claw.mjs');
export const BARE = join(ROOT, 'scripts', 'bench', 'bare.mjs');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once something accepts TCP connections on 127.0.0.1:`port` (a broker the bench started); ~3 s at most. */
export async function waitForTcp(port, what) {
  for (let i = 0; ; i++) {
    const up = await new Promise((r) => {
      const s = createConnection({ port, host: '127.0.0.1' }, () => (s.destroy(), r(true)));
      s.on('error', () => r(false));
    });
    if (up) return;
    if (i > 300) throw new Error(`${what} did not start`);
    await sleep(10);
  }
}

/** The runtime every child is started with (scripts/bench.mjs --node=PATH: Node 22, Bun, ...); this Node by default. */
export const runtime = { exec: process.execPath };

// ---------- options ----------
/**
 * The common option-parsing skeleton. `flags` maps a bare flag to [key, value] (e.g.
 * '--no-mcp': ['mcp', false]), `defaults` gives each key's start value, `valueNames` the options
 * taking a value (`--name=V` or `--name V`). Returns { flags, values, num } where num(key, default)
 * is the value as a positive integer (exit 2 with `${name}: --key must be a positive number` if not).
 */
export function parseArgs(argv, { name, usage, defaults, flags, valueNames }) {
  const o = { ...defaults };
  const values = {};
  const valueRe = new RegExp(`^--(${valueNames.join('|')})(?:=(.*))?$`);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (Object.hasOwn(flags, a)) o[flags[a][0]] = flags[a][1];
    else if (a === '--help' || a === '-h') {
      process.stdout.write(usage);
      process.exit(0);
    } else {
      const m = valueRe.exec(a);
      if (!m) {
        process.stderr.write(`${name}: unknown argument ${a}\n`);
        process.exit(2);
      }
      values[m[1]] = m[2] ?? argv[++i];
    }
  }
  const num = (k, d) => {
    if (values[k] === undefined) return d;
    const n = Number(values[k]);
    if (!Number.isFinite(n) || n <= 0) {
      process.stderr.write(`${name}: --${k} must be a positive number\n`);
      process.exit(2);
    }
    return Math.floor(n);
  };
  return { flags: o, values, num };
}

// ---------- /proc readers ----------
/** pid → { ppid, state, comm } for every process we can see. */
export function processTable() {
  const t = new Map();
  let names = [];
  try {
    names = readdirSync('/proc');
  } catch {
    return t;
  }
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const s = readFileSync(`/proc/${n}/stat`, 'utf8');
      const close = s.lastIndexOf(')');
      const f = s.slice(close + 2).split(' ');
      t.set(Number(n), { ppid: Number(f[1]), state: f[0], comm: s.slice(s.indexOf('(') + 1, close) });
    } catch {
      // gone
    }
  }
  return t;
}

/** Descendants of `pid` (children first, breadth-first), from one /proc scan. */
export function descendants(pid, table = processTable()) {
  const kids = new Map();
  for (const [p, s] of table) {
    if (!kids.has(s.ppid)) kids.set(s.ppid, []);
    kids.get(s.ppid).push(p);
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    for (const k of kids.get(queue.shift()) ?? []) {
      out.push(k);
      queue.push(k);
    }
  }
  return out;
}

export function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}

export function readCgroup(pid) {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** VmRSS and VmHWM of a process in kB (ps rss as a fallback, hwm NaN then). */
export function readRssKb(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+)\s+kB/.exec(s);
    const hwm = /VmHWM:\s+(\d+)\s+kB/.exec(s);
    if (rss) return { rss: Number(rss[1]), hwm: hwm ? Number(hwm[1]) : NaN };
  } catch {}
  try {
    const out = execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return { rss: Number(out), hwm: NaN };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

/**
 * CPU time the process itself has used so far, all threads, in ms: the sum of sum_exec_runtime (ns)
 * in /proc/<pid>/task/<tid>/schedstat. Unlike wall-clock it barely moves when the machine is busy,
 * so it is the steadier number on a shared box. With `tickFallback` (the default) falls back to
 * utime+stime (10 ms ticks); NaN if neither (or, without the fallback, if schedstat is unreadable).
 */
export function readCpuMs(pid, tickFallback = true) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    if (ns > 0) return ns / 1e6;
  } catch {}
  if (!tickFallback) return NaN;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // fields 14, 15; USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

/**
 * Minor page faults of the process so far (/proc/<pid>/stat field 10): first touches of memory. On a VM they can
 * cost more than the work (13 us each on the machine of BENCH.md "The rest of the gap"), so a start that touches
 * fewer pages is faster there; NaN off Linux.
 */
export function readMinorFaults(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[7]);
  } catch {
    return NaN;
  }
}

/** CPU time of reaped descendants (cutime + cstime), ms; 10 ms ticks (USER_HZ 100). */
export function readChildCpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // fields 16, 17
  } catch {
    return NaN;
  }
}

// ---------- child bookkeeping: nothing may outlive the bench ----------
export const live = new Set();
/** Extra pids a child reported (e.g. the bare MCP proxy's server): killed with everything else. */
export const extraPids = new Set();
let killTree = false;

/** SIGKILL every live child (with killTree: each one's descendants too, by pid from one /proc scan) and every extra pid. */
export function killAll() {
  const table = killTree ? processTable() : undefined;
  for (const c of live) {
    const below = table && c.pid ? descendants(c.pid, table) : [];
    try {
      c.kill('SIGKILL');
    } catch {}
    for (const p of below) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
  }
  live.clear();
  for (const p of extraPids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
  extraPids.clear();
}

/**
 * killAll (then `onExit`) on exit, SIGINT and SIGTERM (exit 130), and after a global timeout of
 * `timeoutS` seconds (exit 1). Returns the global timer (runMain clears it).
 */
export function guardChildren({ name, timeoutS, tree = false, onExit }) {
  killTree = tree;
  process.on('exit', () => {
    killAll();
    onExit?.();
  });
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      killAll();
      process.stderr.write(`${name}: interrupted (${sig})\n`);
      process.exit(130);
    });
  }
  return setTimeout(() => {
    process.stderr.write(`${name}: global timeout of ${timeoutS}s reached, killing children\n`);
    killAll();
    process.exit(1);
  }, timeoutS * 1000);
}

/** Run main(); clear the global timer either way; on error kill the children, report, exit code 1. */
export function runMain(name, main, globalTimer) {
  main().then(
    () => {
      clearTimeout(globalTimer);
    },
    (err) => {
      clearTimeout(globalTimer);
      killAll();
      process.stderr.write(`${name}: ${err?.stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * A spawned child (process.execPath argv) speaking NDJSON: counts reply lines as they arrive
 * (cheap), parses later. `stampAtArrival`: a waiter resolves with the time the chunk arrived
 * (before counting its lines) rather than after counting.
 */
export class Proc {
  constructor(kind, argv, { cwd, env }, { stampAtArrival = false } = {}) {
    this.kind = kind;
    this.chunks = [];
    this.lines = 0;
    this.waiter = null;
    this.stderrHead = '';
    this.stderrTail = '';
    this.exitInfo = null;
    this.t0 = performance.now();
    const child = spawn(runtime.exec, argv, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    live.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal, at: performance.now() };
        live.delete(child);
        this.fail(new Error(`${kind} exited early (code ${code}, signal ${signal}); stderr: ${this.stderrTail.slice(-1500)}`));
        resolve(this.exitInfo);
      });
    });
    child.once('error', (e) => this.fail(e));
    child.stdin.on('error', () => {}); // EPIPE if the child died: reported through 'exit'
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      if (this.stderrHead.length < 64 * 1024) this.stderrHead += d;
      this.stderrTail = (this.stderrTail + d).slice(-4000);
    });
    child.stdout.on('data', (chunk) => {
      const at = stampAtArrival ? performance.now() : 0;
      this.chunks.push(chunk);
      let i = -1;
      while ((i = chunk.indexOf(10, i + 1)) !== -1) this.lines++;
      if (this.waiter && this.lines >= this.waiter.n) {
        const w = this.waiter;
        this.waiter = null;
        clearTimeout(w.timer);
        w.resolve(stampAtArrival ? at : performance.now());
      }
    });
  }
  get pid() {
    return this.child.pid;
  }
  fail(err) {
    if (!this.waiter) return;
    const w = this.waiter;
    this.waiter = null;
    clearTimeout(w.timer);
    w.reject(err);
  }
  /** Resolves with performance.now() at the moment the n-th reply line (since reset) arrived. */
  waitLines(n, timeoutMs) {
    if (this.lines >= n) return Promise.resolve(performance.now());
    if (this.exitInfo) return Promise.reject(new Error(`${this.kind} already exited; stderr: ${this.stderrTail.slice(-1500)}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`${this.kind}: timed out after ${timeoutMs} ms with ${this.lines}/${n} reply lines; stderr: ${this.stderrTail.slice(-1500)}`));
      }, timeoutMs);
      this.waiter = { n, resolve, reject, timer };
    });
  }
  /** The complete lines received so far (and forget them). */
  takeLines() {
    const text = Buffer.concat(this.chunks).toString('utf8');
    this.chunks = [];
    this.lines = 0;
    const parts = text.split('\n');
    const rest = parts.pop();
    if (rest) this.chunks.push(Buffer.from(rest));
    return parts;
  }
  /** The complete lines received so far, kept. */
  peekLines() {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return text.split('\n').slice(0, -1);
  }
  write(data) {
    this.child.stdin.write(data);
  }
  /** Write one request line and wait for the response with its id; { ms, msg } (ms: write → reply line). */
  async call(line, id, timeoutMs = 15000) {
    const t0 = performance.now();
    this.write(line);
    const { t, msg } = await awaitReply(this, id, timeoutMs);
    this.takeLines();
    return { ms: t - t0, msg };
  }
  /** The runtime's structured log lines (JSON on stderr) seen so far. */
  logLines() {
    const out = [];
    for (const l of this.stderrHead.split('\n')) {
      if (!l.startsWith('{')) continue;
      try {
        out.push(JSON.parse(l));
      } catch {}
    }
    return out;
  }
  /** Close stdin (a clean shutdown), wait up to 3 s, then SIGKILL. Resolves with { ms to exit after EOF, clean }. */
  async stop() {
    const t = performance.now();
    if (!this.exitInfo) {
      try {
        this.child.stdin.end();
      } catch {}
      const done = await Promise.race([this.exited.then(() => true), sleep(3000).then(() => false)]);
      if (!done) {
        this.child.kill('SIGKILL');
        await this.exited;
        return { ms: performance.now() - t, clean: false };
      }
    }
    const info = this.exitInfo;
    return { ms: info.at - t, clean: info.code === 0 };
  }
  kill() {
    if (!this.exitInfo) this.child.kill('SIGKILL');
  }
}

/** Wait for the response with this id (skipping notifications); time is when its line arrived. */
export async function awaitReply(p, id, timeoutMs) {
  let want = 1;
  for (;;) {
    const t = await p.waitLines(want, timeoutMs);
    const msgs = p.peekLines().map((l) => JSON.parse(l));
    const msg = msgs.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
    if (msg) return { t, msg };
    want = msgs.length + 1;
  }
}

/**
 * After a pipelined batch of n requests was written: wait until n responses (lines with an id)
 * arrived. Should notifications (e.g. a heartbeat) have been among the lines, wait for as many more
 * lines as there were non-replies. { t: when the last line arrived, msgs: the parsed responses } (kept, not taken).
 */
export async function awaitResponses(p, n, timeoutMs) {
  let want = n;
  for (;;) {
    const t = await p.waitLines(want, timeoutMs);
    const msgs = p.peekLines().map((l) => JSON.parse(l)).filter((m) => m.id !== undefined);
    if (msgs.length >= n) return { t, msgs };
    want += n - msgs.length;
  }
}

/**
 * Spawn a child (process.execPath argv) and send it `initLine`; { p, t: when the initialize reply
 * line arrived, msg: that reply } (the lines are kept). The child is killed if that fails.
 */
export async function spawnAndInit(kind, argv, spawnOpts, initLine, timeoutMs, procOpts) {
  const p = new Proc(kind, argv, spawnOpts, procOpts);
  try {
    p.write(initLine);
    const { t, msg } = await awaitReply(p, 1, timeoutMs);
    return { p, t, msg };
  } catch (e) {
    p.kill();
    throw e;
  }
}

/** The claw.initialize request line (id 1) both benches send, with the manifest inline. */
export function initializeLine(clientName, manifest) {
  return (
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'claw.initialize',
      params: { protocolVersion: '0.3.0', clientInfo: { name: clientName, version: '1.0.0' }, manifest, capabilities: {} },
    }) + '\n'
  );
}

/** The first fields of both JSON summaries: date, node, platform, cpus. */
export function summaryHead() {
  return { date: new Date().toISOString(), node: process.version, platform: `${platform()}-${arch()}`, cpus: cpus().length };
}

// ---------- statistics ----------
export function quantile(xs, q) {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * s.length)); // nearest rank
  return s[rank - 1];
}
export const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---------- output ----------
export const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
export const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
export const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
export const mb = (kb) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : 'n/a');
export const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
export const sgn = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(2)}` : 'n/a');
export const r2 = (x) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);
export const r3 = (x) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);

/** Plain-text table: first column left-aligned, the others right-aligned, a dashed rule under the header. */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r, ri) => {
      const line = r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}
