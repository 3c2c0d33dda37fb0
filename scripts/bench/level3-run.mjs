// scripts/bench.mjs with a manifest that declares memory: the Level 3 table (scripts/bench/level3.mjs says what
// is measured), with bare Node and Level 1 minimal (examples/minimal/claw.yaml) in the same rotation.
import { join } from 'node:path';
import { cpus, arch, platform, loadavg } from 'node:os';
import { execFileSync } from 'node:child_process';
import { BARE, runtime, initializeLine, summaryHead, f1, f2, int, mb, r3, table } from './lib.mjs';
import { LEVEL3_TARGETS as T, copyAgent, level3Start, level3Fill, stat } from './level3.mjs';

/** `node --version` / `bun --version` of the runtime under test. */
function runtimeVersion() {
  try {
    const v = execFileSync(runtime.exec, ['--version'], { encoding: 'utf8' }).trim();
    return /bun/.test(runtime.exec) ? `bun ${v}` : `node ${v}`;
  } catch {
    return runtime.exec;
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export async function runLevel3({ opt, claw, tmp, manifest, minimal, progress }) {
  const env = { ...process.env, CLAW_CACHE_DIR: join(tmp, 'cache') };
  const l3File = copyAgent(manifest.file, join(tmp, 'agent'));
  const l3 = { argv: [...opt.nodeFlags, claw, 'run', l3File], cwd: join(tmp, 'agent'), env, initLine: initializeLine('claw-bench', manifest.object) };
  const l1 = { argv: [...opt.nodeFlags, claw, 'run', minimal.file], cwd: join(minimal.file, '..'), env, initLine: initializeLine('claw-bench', minimal.object) };
  const bare = { argv: [...opt.nodeFlags, BARE, 'run', l3File], cwd: l3.cwd, env, initLine: l3.initLine };
  const series = {
    bare: () => level3Start('bare', 'status', bare),
    l1: () => level3Start('claw-l1', 'status', l1),
    l3: () => level3Start('claw-l3', 'status', l3),
    'l3-query': () => level3Start('claw-l3', 'query', l3),
  };
  const rt = runtimeVersion();
  const loadBefore = load();
  progress(`${rt}; Level 3 manifest ${manifest.label}; load average ${loadBefore}`);
  progress('warm-up (discarded: fills the code cache and the sandbox probe cache, creates the database)');
  for (const k of ['l3', 'l3', 'l1', 'l1', 'bare', 'l3-query']) await series[k]();

  const kinds = Object.keys(series);
  const res = Object.fromEntries(kinds.map((k) => [k, []]));
  progress(`${opt.level3Runs} runs of each, rotating ${kinds.join(' / ')}`);
  for (let i = 0; i < opt.level3Runs; i++) for (let j = 0; j < kinds.length; j++) res[kinds[(i + j) % kinds.length]].push(await series[kinds[(i + j) % kinds.length]]());

  progress(`fill: ${opt.fillRuns} start(s), 10,000 entries then 50 queries each`);
  const fills = [];
  for (let i = 0; i < opt.fillRuns; i++) {
    const dir = join(tmp, `fill-${i}`);
    const file = copyAgent(manifest.file, dir);
    fills.push(await level3Fill({ ...l3, argv: [...opt.nodeFlags, claw, 'run', file], cwd: dir }));
  }
  const loadAfter = load();

  const m = (k, f) => stat(res[k].map(f)).median;
  const bareFirst = m('bare', (r) => r.initMs);
  const bareFirstCpu = m('bare', (r) => r.initCpu);
  const bareRss = m('bare', (r) => r.rssKb);
  const s = {
    bare: { ms: bareFirst, cpu: bareFirstCpu, rss: bareRss, faults: m('bare', (r) => r.initFaults) },
    l1: { ms: m('l1', (r) => r.initMs), cpu: m('l1', (r) => r.initCpu), rss: m('l1', (r) => r.rssKb), faults: m('l1', (r) => r.initFaults) },
    l3: { ms: m('l3', (r) => r.initMs), cpu: m('l3', (r) => r.initCpu), rss: m('l3', (r) => r.rssKb), faults: m('l3', (r) => r.initFaults) },
    query: { ms: m('l3-query', (r) => r.nextMs), cpu: m('l3-query', (r) => r.nextCpu), rss: m('l3-query', (r) => r.rssKb), faults: m('l3-query', (r) => r.nextFaults) },
    fill: {
      hwmKb: stat(fills.map((f) => f.hwmKb)).median,
      hwmMax: Math.max(...fills.map((f) => f.hwmKb)),
      rssKb: stat(fills.map((f) => f.rssKb)).median,
      queryP50: stat(fills.map((f) => f.queryP50)).median,
      queryP90: stat(fills.map((f) => f.queryP90)).median,
      storeMs: stat(fills.map((f) => f.storeMs)).median,
      wasm: fills[0]?.wasm,
    },
  };
  const ok = (r, t) => (r <= t ? 'ok' : 'MISS');
  const row = (name, x, target) => [name, f1(x.ms), `${f2(x.ms / bareFirst)}x`, f1(x.cpu), `${f2(x.cpu / bareFirstCpu)}x`, mb(x.rss), `${f2(x.rss / bareRss)}x`, int(x.faults), target];
  const rows = [
    ['from spawn to', 'wall ms', 'vs bare', 'CPU ms', 'vs bare', 'RSS MB', 'vs bare', 'page faults', 'targets (wall, RSS)'],
    row('bare: initialize reply', s.bare, ''),
    row('L1 minimal: initialize reply', s.l1, ''),
    row('L3: initialize reply', s.l3, `<= ${T.init}x ${ok(s.l3.ms / bareFirst, T.init)}, RSS <= ${T.rss}x ${ok(s.l3.rss / bareRss, T.rss)}`),
    row('L3: first memory.query reply', s.query, `<= ${T.query}x ${ok(s.query.ms / bareFirst, T.query)}`),
  ];
  const fillRows = [
    ['after 10,000 entries + 50 queries', 'value', 'target'],
    ['VmHWM median (max) MB', `${mb(s.fill.hwmKb)} (${mb(s.fill.hwmMax)})`, `<= ${T.hwmMb} MB ${ok(s.fill.hwmKb / 1024, T.hwmMb)}`],
    ['VmRSS MB', mb(s.fill.rssKb), ''],
    ['query p50 / p90 ms (write -> reply)', `${f1(s.fill.queryP50)} / ${f1(s.fill.queryP90)}`, ''],
    ['10,000 entries stored in (ms, 100 calls)', f1(s.fill.storeMs), ''],
    ['sql.js WebAssembly tier', String(s.fill.wasm ?? 'n/a'), ''],
  ];
  const summary = {
    ...summaryHead(),
    runtime: rt,
    manifest: manifest.label,
    runs: opt.level3Runs,
    fillRuns: opt.fillRuns,
    nodeFlags: opt.nodeFlags,
    loadavg: { before: loadBefore, after: loadAfter },
    firstReplyMs: Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'fill').map(([k, v]) => [k, { ms: r3(v.ms), cpuMs: r3(v.cpu), rssKb: v.rss, minorFaults: v.faults, ratio: r3(v.ms / bareFirst), cpuRatio: r3(v.cpu / bareFirstCpu), rssRatio: r3(v.rss / bareRss) }])),
    fill: s.fill,
  };
  if (!opt.json) {
    process.stdout.write(
      `claw-edge Level 3 bench: ${rt}, ${platform()}-${arch()}, ${cpus().length} CPUs; ${manifest.label} and examples/minimal/claw.yaml vs scripts/bench/bare.mjs\n` +
        `${opt.level3Runs} starts of each (medians; warm code and probe caches); load average before ${loadBefore}, after ${loadAfter}\n` +
        `wall-clock columns are load-affected; CPU (user+sys, all threads, at the reply) much less so; page faults: minor, at the reply\n\n${table(rows)}\n\n${table(fillRows)}\n\n`,
    );
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}
