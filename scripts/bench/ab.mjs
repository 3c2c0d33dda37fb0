#!/usr/bin/env node
// A/B cold start of several claw builds (and bare.mjs) in ONE run, rotated run by run, so a burst of load
// on this shared machine hits every variant alike (BENCH.md "Start-up: code cache"). Measures exactly what
// scripts/bench.mjs measures for the cold start: spawn → claw.initialize reply line, then CPU time and VmRSS
// after the reply to one claw.status, plus one discarded warm-up per variant.
//
//   node scripts/bench/ab.mjs [--runs=N] [--manifest=FILE] [--node=BIN] [--load] \
//     [--trace] --variant=label=FILE[,ENV=VALUE...] [--variant=...]
//
// A variant's ENV=VALUE pairs are added to its environment only (e.g. CLAW_CACHE_DIR=/tmp/c);
// ENV= (empty) removes that variable. bare.mjs is always one of the variants, as `bare`, with the
// environment unchanged. `--node` runs every variant (bare included) with another node binary.
// Prints a table (median, p90, ratio to bare) and one JSON line. Node 18+, node: built-ins only.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, BARE, initializeLine, readRssKb, readCpuMs, median, quantile, f1, f3, mb, table } from './lib.mjs';

const argv = process.argv.slice(2);
const val = (k) => argv.filter((a) => a.startsWith(`--${k}=`)).map((a) => a.slice(k.length + 3));
const runs = Number(val('runs')[0] ?? 20);
const node = val('node')[0] ? resolve(val('node')[0]) : process.execPath;
const manifestFile = resolve(val('manifest')[0] ?? join(ROOT, 'examples', 'minimal', 'claw.yaml'));
const variants = [{ label: 'bare', file: BARE, env: {} }];
for (const v of val('variant')) {
  const [head, ...pairs] = v.split(',');
  const eq = head.indexOf('=');
  if (eq < 1) throw new Error(`--variant=${v}: expected label=FILE[,ENV=VALUE...]`);
  const env = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    env[p.slice(0, i)] = p.slice(i + 1);
  }
  variants.push({ label: head.slice(0, eq), file: resolve(head.slice(eq + 1)), env });
}
if (variants.length < 2) {
  process.stderr.write('usage: node scripts/bench/ab.mjs [--runs=N] [--manifest=FILE] [--node=BIN] --variant=label=FILE[,ENV=VALUE...]...\n');
  process.exit(2);
}

// The manifest goes inline in initialize, as scripts/bench.mjs does (JSON, or the YAML subset via JSON.parse
// of a .json twin when given a .json file; the default YAML example has a JSON twin beside it).
const jsonTwin = manifestFile.replace(/\.ya?ml$/, '.json');
const manifestObject = JSON.parse(readFileSync(manifestFile.endsWith('.json') ? manifestFile : jsonTwin, 'utf8'));
const initLine = initializeLine('claw-ab', manifestObject);

function envFor(v) {
  const env = { ...process.env };
  for (const [k, x] of Object.entries(v.env)) {
    if (x === '') delete env[k];
    else env[k] = x;
  }
  return env;
}

// --trace: claw variants run with CLAW_STARTUP_TRACE=1 (a build whose loader prints a startup_trace line: the
// code-cache builds before the chunk build; the chunk build prints none) and the table adds "own ms", the median
// time from the loader's first line to the reply write: claw's own start-up work without Node's bootstrap, whose
// 10–20 ms swings on this VM drown sub-millisecond changes in the start column.
const traced = argv.includes('--trace');

/** One cold start: { ms, cpuMs, rssKb, ownMs? }. */
function once(v) {
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now();
    const env = envFor(v);
    if (traced && v.label !== 'bare') env.CLAW_STARTUP_TRACE = '1';
    const child = spawn(node, [v.file, 'run', manifestFile], { cwd: dirname(manifestFile), env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${v.label}: no initialize reply in 15 s; stderr: ${err.slice(-1000)}`));
    }, 15000);
    child.stderr.on('data', (d) => (err += d));
    let ms;
    let cpuMs;
    child.stdout.on('data', (d) => {
      out += d;
      const lines = out.split('\n').length - 1;
      if (lines === 0 || (ms !== undefined && lines < 2)) return;
      if (ms === undefined) {
        ms = performance.now() - t0;
        const msg = JSON.parse(out.slice(0, out.indexOf('\n')));
        if (!msg.result) reject(new Error(`${v.label}: ${out.slice(0, 300)}`));
        // RSS after the reply to a second request, read through the stdin stream (scripts/bench.mjs, item 2).
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'claw.status' })}\n`);
        if (lines < 2) return;
      }
      const rss = readRssKb(child.pid).rss;
      cpuMs = readCpuMs(child.pid);
      clearTimeout(timer);
      child.stdout.removeAllListeners('data');
      child.once('exit', () => {
        const t = traced && /\{"startup_trace":(\{[^}]*\})\}/.exec(err);
        const marks = t ? JSON.parse(t[1]) : undefined;
        resolveRun({ ms, cpuMs, rssKb: rss, ownMs: marks ? marks['first write'] - marks.loader : NaN });
      });
      child.stdin.end();
      child.stdout.resume();
    });
    child.once('error', reject);
    child.stdin.write(initLine);
  });
}

const res = new Map(variants.map((v) => [v.label, []]));
const loads = [loadavg()[0]];
// Warm-up, discarded: twice, as a claw build's first start keeps its manifest record and leaves the code cache
// to the second (docs/startup.md "The manifest cache").
for (let w = 0; w < 2; w++) for (const v of variants) await once(v);
for (let i = 0; i < runs; i++) {
  // Rotate the order so no variant always follows the same one.
  const order = variants.map((_, j) => variants[(i + j) % variants.length]);
  for (const v of order) res.get(v.label).push(await once(v));
}
loads.push(loadavg()[0]);

const stat = (xs, k) => ({ median: median(xs.map((r) => r[k])), p90: quantile(xs.map((r) => r[k]), 0.9) });
const bare = { ms: stat(res.get('bare'), 'ms'), cpu: stat(res.get('bare'), 'cpuMs'), rss: stat(res.get('bare'), 'rssKb') };
const rows = [['variant', 'start ms (p90)', 'start/bare', 'CPU ms', 'CPU/bare', 'RSS MB', 'RSS/bare', ...(traced ? ['own ms (p25-p75)'] : [])]];
const summary = { node: node === process.execPath ? process.version : node, runs, manifest: manifestFile, loadavg1: loads, variants: {} };
for (const v of variants) {
  const r = res.get(v.label);
  const ms = stat(r, 'ms');
  const cpu = stat(r, 'cpuMs');
  const rss = stat(r, 'rssKb');
  const own = r.map((x) => x.ownMs);
  const ownCell = v.label === 'bare' ? '' : `${median(own).toFixed(2)} (${quantile(own, 0.25).toFixed(2)}-${quantile(own, 0.75).toFixed(2)})`;
  rows.push([v.label, `${f1(ms.median)} (${f1(ms.p90)})`, f3(ms.median / bare.ms.median), f1(cpu.median), f3(cpu.median / bare.cpu.median), mb(rss.median), f3(rss.median / bare.rss.median), ...(traced ? [ownCell] : [])]);
  summary.variants[v.label] = { startMs: ms.median, startRatio: ms.median / bare.ms.median, cpuMs: cpu.median, cpuRatio: cpu.median / bare.cpu.median, rssKb: rss.median, rssRatio: rss.median / bare.rss.median, ...(traced && v.label !== 'bare' ? { ownMs: median(own) } : {}) };
}
process.stdout.write(`${table(rows)}\nload average (1 min) before/after: ${loads.map((l) => l.toFixed(2)).join(' / ')}\n${JSON.stringify(summary)}\n`);
