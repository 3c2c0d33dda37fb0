#!/usr/bin/env node
// claw-edge memory benchmark (BENCH.md "Memory"): the stores of src/memory on a durable database in a
// temp directory, per adapter.
//
//   1. store throughput   single: N store() calls of one entry each (each one fsync'ed journal record or
//                         native commit) → entries/s; batched: calls of 100 entries → entries/s
//   2. query latency      full-text `semantic` queries (two content words, see VOCAB below) on a semantic store
//                         holding 10k and 100k entries: p50 / p99 per query, in-process (no JSON-RPC)
//   3. RSS                resident set with the 100k-entry store open
//   4. bytes written      bytes handed to write() (/proc/self/io wchar) while storing, per entry and as a
//                         multiple of the payload (content + metadata JSON), goal ≤ 3×; sql.js also reports
//                         its journal and snapshot bytes
//   5. wasm               (sql.js) cold open in a fresh process: wasm read beside the bundle vs embedded as
//                         base64 in the JS (the alternative to shipping sql-wasm.wasm), and the size of each
//
//   6. long fills          one fresh database per store type / call size, filled to 20k–100k entries: bytes per
//                         entry at the end, min/max, and averaged log-uniformly over where the store stops
//
// Usage: node scripts/bench-memory.mjs [--quick] [--json] [--adapter=sqljs|native|bun|all] [--skip-wasm] [--fill-only] [--large]
//   --fill-only  only part 6 (the long fills); --no-fill  parts 1–5 only; --large adds a row of ~1 KB entries
//   --quick    10k only, fewer calls (smoke run)
//   --skip-wasm  no beside-vs-embedded comparison (for alternated before/after runs of the stores)
//   all (default): sql.js under this Node, then native (node:sqlite) under .build/runtimes Node 22 if installed
//                  (scripts/install-runtimes.sh), else under this Node when it has node:sqlite; then bun:sqlite
//                  under .build/runtimes Bun if installed.
// Linux (reads /proc). The sources are bundled with esbuild into .build/bench-memory/ first.
import { build } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.cwd();
const args = new Map(process.argv.slice(2).map((a) => (a.includes('=') ? a.slice(2).split('=') : [a.slice(2), true])));
const quick = args.has('quick');
const json = args.has('json');
const adapterArg = args.get('adapter') ?? 'all';
const out = join(root, '.build', 'bench-memory');
mkdirSync(out, { recursive: true });
const log = (...a) => process.stderr.write(`${a.join(' ')}\n`);

// The worker: one adapter, one process, prints one JSON line.
const WORKER = `
import { openDatabase } from './src/memory/sqlite/open.ts';
import { openMemoryStore } from './src/memory/stores/index.ts';
import { readFileSync } from 'node:fs';
const [adapter, dir, quick, fillOnly, large, noFill] = process.argv.slice(2);
const wchar = () => Number(/wchar: (\\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
// A synthetic language: 20,000 pseudo-words; documents draw them Zipf-distributed (s = 1, like natural text),
// queries draw two content words uniformly from ranks 50–5,000 (no stop words: the query path quotes terms and
// a "the" would match everything).
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po', 'da', 'fe', 'gu', 'hi', 'jo', 'be'];
const VOCAB = Array.from({ length: 20000 }, (_, i) => { let w = '', n = i + 1; do { w += SYL[n % 16]; n = Math.floor(n / 16); } while (n > 0); return w; });
const H = VOCAB.reduce((h, _, i) => h + 1 / (i + 1), 0);
const CDF = (() => { let acc = 0; return VOCAB.map((_, i) => (acc += 1 / (i + 1) / H)); })();
const zipf = () => { const u = rnd(); let lo = 0, hi = CDF.length - 1; while (lo < hi) { const m = (lo + hi) >> 1; if (CDF[m] < u) lo = m + 1; else hi = m; } return VOCAB[lo]; };
const queryWord = () => VOCAB[50 + Math.floor(rnd() * 4950)];
// ~100-byte entries: 16 words + a number, metadata {source}.
const entry = (i) => ({ content: Array.from({ length: 16 }, zipf).join(' ') + ' #' + i, metadata: { source: 'bench' } });
const payload = (e) => Buffer.byteLength(e.content) + Buffer.byteLength(JSON.stringify(e.metadata));
// One turn of the event loop after each call, as a server gets between requests (they arrive by I/O): without it
// a loop of awaited calls runs on microtasks only, and the threadpool's deflate of an automatic sql.js snapshot
// could never deliver (the snapshot would never be written, and its bytes never counted).
const turn = () => new Promise((r) => setImmediate(r));
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const r = { adapter, node: process.version };
if (fillOnly !== '1') {
const db = await openDatabase({ path: dir + '/bench.db', adapter });
r.fts = db.capabilities.fts;
const conv = openMemoryStore({ name: 'conv', type: 'conversation' }, { db });
const sem = openMemoryStore({ name: 'sem', type: 'semantic', search: { strategy: 'fts-only' } }, { db });
// 1. throughput + 4. bytes (conversation: one row per entry; semantic: + its FTS rows)
const single = quick === '1' ? 300 : 1000;
let pay = 0, w0 = wchar(), t0 = performance.now();
for (let i = 0; i < single; i++) { const e = entry(i); pay += payload(e); await conv.store([e]); await turn(); }
let ms = performance.now() - t0;
r.single = { calls: single, entries_per_s: Math.round(single / (ms / 1000)), ms_per_call: +(ms / single).toFixed(3), bytes_per_entry: Math.round((wchar() - w0) / single), x_payload: +((wchar() - w0) / pay).toFixed(2) };
const batches = quick === '1' ? 20 : 100;
pay = 0; w0 = wchar(); t0 = performance.now();
for (let b = 0; b < batches; b++) { const es = Array.from({ length: 100 }, (_, k) => entry(b * 100 + k)); for (const e of es) pay += payload(e); await conv.store(es); await turn(); }
ms = performance.now() - t0;
r.batched = { calls: batches, entries_per_s: Math.round((batches * 100) / (ms / 1000)), bytes_per_entry: Math.round((wchar() - w0) / (batches * 100)), x_payload: +((wchar() - w0) / pay).toFixed(2) };
// 2. query latency at 10k and 100k semantic entries (filled in batches of 1000) + 3. RSS + 4. bytes for the fill
r.query = [];
let have = 0; pay = 0; w0 = wchar(); const j0 = db.durable ? { ...db.durable.stats } : undefined;
for (const target of quick === '1' ? [10000] : [10000, 100000]) {
  while (have < target) { const es = Array.from({ length: 1000 }, (_, k) => entry(have + k)); for (const e of es) pay += payload(e); await sem.store(es); await turn(); have += 1000; }
  const n = quick === '1' ? 100 : 300;
  for (let i = 0; i < 20; i++) await sem.query({ type: 'semantic', text: queryWord() + ' ' + queryWord(), top_k: 10 });
  const lat = [];
  for (let i = 0; i < n; i++) { const t = performance.now(); await sem.query({ type: 'semantic', text: queryWord() + ' ' + queryWord(), top_k: 10 }); lat.push(performance.now() - t); }
  r.query.push({ entries: target, p50_ms: +pct(lat, 50).toFixed(3), p99_ms: +pct(lat, 99).toFixed(3) });
}
r.semantic_fill = { entries: have, bytes_per_entry: Math.round((wchar() - w0) / have), x_payload: +((wchar() - w0) / pay).toFixed(2) };
if (j0) {
  const s = db.durable.stats;
  r.semantic_fill.journal_bytes_per_entry = Math.round((s.journalBytesWritten - j0.journalBytesWritten) / have);
  r.semantic_fill.snapshot_bytes_per_entry = Math.round((s.snapshotBytesWritten - j0.snapshotBytesWritten) / have);
  r.semantic_fill.snapshots = s.snapshots - j0.snapshots;
}
r.rss_mb = +(rss() / 1048576).toFixed(1);
if (db.durable) {
  // Over the whole run: what each entry cost in journal (per write, deterministic) and in snapshots (amortized,
  // depends on where the run ends relative to the last snapshot).
  const s = db.durable.stats, n = single + batches * 100 + have;
  r.durable_total = { entries: n, journal_per_entry: Math.round(s.journalBytesWritten / n), snapshot_per_entry: Math.round(s.snapshotBytesWritten / n), snapshots: s.snapshots, last_snapshot_mb: +(s.lastSnapshotSize / 1048576).toFixed(1) };
}
await conv.close(); await sem.close(); db.close();
const t1 = performance.now();
const re = await openDatabase({ path: dir + '/bench.db', adapter });
r.reopen_ms = Math.round(performance.now() - t1);
re.close();
}
// 6. Long fills, one fresh database per row: bytes per entry as a function of where the store stops. With
// whole-image snapshots the cumulative bytes per entry saw-tooth (low just before a snapshot, high just after), so
// one end point proves nothing: report the final figure, the min/max over the run, and the average over stop
// points drawn log-uniformly (weight 1/n) — over the whole run from n0, and over the last complete snapshot
// cycle (from just after one snapshot to just after the next), which is the steady-state average.
const fills = noFill === '1' ? [] : quick === '1'
  ? [['conversation', 'conversation', 20000, 100, false], ['semantic', 'semantic', 20000, 1000, false]]
  : [
      ['conversation, 100 per call', 'conversation', 100000, 100, false],
      ['semantic, 1000 per call', 'semantic', 100000, 1000, false],
      ['conversation, single writes', 'conversation', 20000, 1, false],
      ['conversation, single writes + request_id', 'conversation', 20000, 1, true],
      ['semantic, single writes + request_id', 'semantic', 20000, 1, true],
      ['key-value, 100 per call (distinct keys)', 'key-value', 50000, 100, false],
      ['checkpoint, 100 per call (100 tasks)', 'checkpoint', 50000, 100, false],
      ...(large === '1' ? [['conversation, 1 KB entries, 100 per call', 'conversation', 20000, 100, false, 1000]] : []),
    ];
r.fills = [];
for (const [label, type, total, per, withRid, size] of fills) {
  const fdb = await openDatabase({ path: dir + '/fill-' + r.fills.length + '.db', adapter });
  const st = openMemoryStore({ name: type === 'semantic' ? 'sem' : 'conv', type, ...(type === 'semantic' ? { search: { strategy: 'fts-only' } } : {}) }, { db: fdb });
  const mk = (i) => {
    const e = entry(i);
    if (size) { while (e.content.length < size) e.content += ' ' + zipf(); }
    if (type === 'key-value') e.key = 'k' + i;
    if (type === 'checkpoint') e.key = 'task-' + (i % 100);
    return e;
  };
  const pl = (e) => payload(e) + (e.key ? Buffer.byteLength(e.key) : 0);
  const pts = []; let n = 0, p = 0, snaps = 0; const base = wchar();
  const f0 = performance.now();
  while (n < total) {
    const es = Array.from({ length: per }, (_, k) => mk(n + k));
    for (const e of es) p += pl(e);
    await st.store(es, withRid ? { requestId: 'req-' + n + '-' + Math.floor(rnd() * 1e9).toString(16) } : {});
    await turn();
    n += per;
    const s = fdb.durable ? fdb.durable.stats.snapshots : 0;
    pts.push({ n, w: wchar() - base, p, snap: s > snaps });
    snaps = s;
  }
  if (fdb.durable) { await fdb.durable.settled(); pts[pts.length - 1].w = wchar() - base; } // a snapshot still compressing counts
  const fill_s = (performance.now() - f0) / 1000;
  const x = (q) => q.w / q.p;
  // log-uniform average of the bytes/payload ratio over stop points in [a, b] (trapezoid on ln n)
  const logAvg = (sel) => { let acc = 0, span = 0; for (let k = 1; k < sel.length; k++) { const d = Math.log(sel[k].n / sel[k - 1].n); acc += d * (x(sel[k]) + x(sel[k - 1])) / 2; span += d; } return span > 0 ? acc / span : x(sel[sel.length - 1]); };
  const n0 = Math.min(total / 10, 10000);
  const from = pts.filter((q) => q.n >= n0);
  const snapIdx = pts.map((q, k) => (q.snap ? k : -1)).filter((k) => k >= 0);
  const cycle = snapIdx.length >= 2 ? pts.slice(snapIdx[snapIdx.length - 2], snapIdx[snapIdx.length - 1] + 1) : undefined;
  const last = pts[pts.length - 1];
  const row = {
    label, entries: total, per_call: per, payload_per_entry: Math.round(last.p / total),
    final_bytes_per_entry: Math.round(last.w / total), final_x: +x(last).toFixed(2),
    min_x: +Math.min(...from.map(x)).toFixed(2), max_x: +Math.max(...from.map(x)).toFixed(2),
    avg_x_log_from: n0, avg_x: +logAvg(from).toFixed(2),
    cycle_avg_x: cycle ? +logAvg(cycle).toFixed(2) : undefined, cycle_entries: cycle ? [cycle[0].n, cycle[cycle.length - 1].n] : undefined,
    entries_per_s: Math.round(total / fill_s),
  };
  if (fdb.durable) {
    const s = fdb.durable.stats;
    Object.assign(row, { journal_per_entry: Math.round(s.journalBytesWritten / total), snapshot_per_entry: Math.round(s.snapshotBytesWritten / total), snapshots: s.snapshots, last_snapshot_kb: Math.round(s.lastSnapshotSize / 1024), journal_kb_at_end: Math.round(s.journalSize / 1024) });
  }
  await st.close(); fdb.close();
  const t2 = performance.now();
  const re2 = await openDatabase({ path: dir + '/fill-' + r.fills.length + '.db', adapter });
  row.reopen_ms = Math.round(performance.now() - t2);
  if (re2.durable) row.records_replayed = re2.durable.recovery.recordsReplayed;
  re2.close();
  r.fills.push(row);
  process.stderr.write('  ' + JSON.stringify(row) + String.fromCharCode(10));
}
console.log(JSON.stringify(r));
`;

// The wasm comparison: a fresh process opens an in-memory sql.js database and runs one query.
const WASM_BESIDE = `
const t0 = performance.now();
const { readFileSync } = await import('node:fs');
const wasmBinary = readFileSync(process.argv[2]);
globalThis.__dirname = '/'; // the glue reads CommonJS __dirname (src/memory/sqlite/sqljs.ts shims it the same way)
const init = (await import('sql.js')).default;
const SQL = await init({ wasmBinary });
new SQL.Database().exec('SELECT 1');
console.log(JSON.stringify({ ms: performance.now() - t0 }));
`;

async function bundleWorker() {
  const file = join(out, 'worker.mjs');
  await build({
    stdin: { contents: WORKER, resolveDir: root, sourcefile: 'bench-memory-worker.ts', loader: 'ts' },
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'error',
  });
  return file;
}

function runWorker(node, file, adapter, flags = ['--no-warnings']) {
  const dir = mkdtempSync(join(tmpdir(), 'claw-bench-memory-'));
  try {
    const r = spawnSync(node, [...flags, file, adapter, dir, quick ? '1' : '0', args.has('fill-only') ? '1' : '0', args.has('large') ? '1' : '0', args.has('no-fill') ? '1' : '0'], { cwd: root, encoding: 'utf8', timeout: 30 * 60_000, stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`${adapter} worker failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function wasmCompare() {
  const wasm = join(root, 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm');
  const beside = join(out, 'wasm-beside.mjs');
  const embedded = join(out, 'wasm-embedded.mjs');
  const base = { bundle: true, platform: 'node', format: 'esm', minify: true, logLevel: 'error', banner: { js: "import{createRequire as __c}from'node:module';const require=__c(import.meta.url);" } };
  await build({ ...base, stdin: { contents: WASM_BESIDE, resolveDir: root, loader: 'js' }, outfile: beside });
  const b64 = readFileSync(wasm).toString('base64');
  const EMB = WASM_BESIDE.replace("const wasmBinary = readFileSync(process.argv[2]);", `const wasmBinary = Buffer.from(${JSON.stringify(b64)}, 'base64');`);
  await build({ ...base, stdin: { contents: EMB, resolveDir: root, loader: 'js' }, outfile: embedded });
  const runs = quick ? 5 : 15;
  const time = (file) => {
    const xs = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = spawnSync(process.execPath, [file, wasm], { encoding: 'utf8' });
      const wall = performance.now() - t;
      if (r.status !== 0) throw new Error(r.stderr);
      xs.push({ wall, init: JSON.parse(r.stdout).ms });
    }
    const med = (k) => xs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return { process_ms: +med('wall').toFixed(1), open_ms: +med('init').toFixed(1) };
  };
  // A process that never opens memory still parses the embedded string: the cost every start pays.
  const bare = join(out, 'wasm-unused.mjs');
  await build({ ...base, stdin: { contents: `const s = ${JSON.stringify(b64)}; if (process.argv[3] === 'x') console.log(s.length); console.log('{"ms":0}');`, loader: 'js' }, outfile: bare });
  const empty = join(out, 'wasm-none.mjs');
  await build({ ...base, stdin: { contents: `console.log('{"ms":0}');`, loader: 'js' }, outfile: empty });
  return {
    wasm_bytes: statSync(wasm).size,
    beside: { js_bytes: statSync(beside).size, ...time(beside) },
    embedded: { js_bytes: statSync(embedded).size, ...time(embedded) },
    start_without_memory: { plain_ms: time(empty).process_ms, with_embedded_string_ms: time(bare).process_ms },
  };
}

const results = { quick, load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '), adapters: [] };
const worker = await bundleWorker();
if (adapterArg === 'all' || adapterArg === 'sqljs') {
  log('sql.js …');
  results.adapters.push(runWorker(process.execPath, worker, 'sqljs'));
}
if (adapterArg === 'all' || adapterArg === 'native') {
  const node22 = join(root, '.build/runtimes/node22/node_modules/.bin/node');
  const hasOwn = spawnSync(process.execPath, ['-e', "import('node:sqlite').then(()=>process.exit(0),()=>process.exit(1))"]).status === 0;
  const node = hasOwn ? process.execPath : existsSync(node22) ? node22 : undefined;
  if (node) {
    log(`node:sqlite (${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}) …`);
    results.adapters.push(runWorker(node, worker, 'native'));
  } else log('native: skipped (no node:sqlite here and no .build/runtimes Node 22; run scripts/install-runtimes.sh)');
}
// Bun's own SQLite (bun:sqlite, FTS5): the native adapter of src/memory/sqlite/native.ts under Bun.
if (adapterArg === 'all' || adapterArg === 'bun') {
  const bun = join(root, '.build/runtimes/bun/node_modules/.bin/bun');
  if (existsSync(bun)) {
    const version = execFileSync(bun, ['--version'], { encoding: 'utf8' }).trim();
    log(`bun:sqlite (bun ${version}) …`);
    results.adapters.push({ ...runWorker(bun, worker, 'native', []), adapter: 'bun:sqlite', node: `bun ${version}` });
  } else log('bun: skipped (no .build/runtimes Bun; run scripts/install-runtimes.sh)');
}
if ((adapterArg === 'all' || adapterArg === 'sqljs') && !args.has('skip-wasm')) {
  log('wasm beside vs embedded …');
  results.wasm = await wasmCompare();
}

if (json) console.log(JSON.stringify(results));
else {
  console.log(`load average ${results.load}${quick ? ' (quick)' : ''}`);
  console.log('| adapter | node | fts | single store entries/s (ms/call) | batched (100/call) entries/s | bytes/entry single · batched · semantic fill (× payload) | query p50 / p99 ms | RSS MB | reopen ms |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const a of results.adapters.filter((x) => x.single)) {
    const q = a.query.map((x) => `${x.entries / 1000}k: ${x.p50_ms} / ${x.p99_ms}`).join('; ');
    console.log(
      `| ${a.adapter} | ${a.node} | ${a.fts} | ${a.single.entries_per_s} (${a.single.ms_per_call}) | ${a.batched.entries_per_s} | ${a.single.bytes_per_entry} (${a.single.x_payload}×) · ${a.batched.bytes_per_entry} (${a.batched.x_payload}×) · ${a.semantic_fill.bytes_per_entry} (${a.semantic_fill.x_payload}×) | ${q} | ${a.rss_mb} | ${a.reopen_ms} |`,
    );
    if (a.durable_total)
      console.log(`  ${a.adapter} whole run (${a.durable_total.entries} entries): journal ${a.durable_total.journal_per_entry} B/entry, snapshots ${a.durable_total.snapshot_per_entry} B/entry (${a.durable_total.snapshots} snapshots, last ${a.durable_total.last_snapshot_mb} MB)`);
    if (a.semantic_fill.journal_bytes_per_entry !== undefined)
      console.log(`  ${a.adapter} semantic fill: journal ${a.semantic_fill.journal_bytes_per_entry} B/entry, snapshots ${a.semantic_fill.snapshot_bytes_per_entry} B/entry (${a.semantic_fill.snapshots} snapshots)`);
  }
  console.log('\nLong fills (one fresh database each): bytes written per entry as a multiple of the payload');
  console.log('| adapter | fill | payload B | final × | min–max × (from n0) | log-uniform avg × from n0 | avg × over last snapshot cycle | journal · snapshot B/entry | snapshots | entries/s | reopen ms (records replayed) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const a of results.adapters)
    for (const f of a.fills ?? [])
      console.log(
        `| ${a.adapter} | ${f.label}, ${f.entries / 1000}k | ${f.payload_per_entry} | ${f.final_x} (${f.final_bytes_per_entry} B) | ${f.min_x}–${f.max_x} | ${f.avg_x} (n0 ${f.avg_x_log_from}) | ${f.cycle_avg_x ?? '—'}${f.cycle_entries ? ` (${f.cycle_entries.join('–')})` : ''} | ${f.journal_per_entry ?? '—'} · ${f.snapshot_per_entry ?? '—'} | ${f.snapshots ?? '—'} | ${f.entries_per_s} | ${f.reopen_ms} (${f.records_replayed ?? '—'}) |`,
      );
  if (results.wasm) {
    const w = results.wasm;
    console.log(`wasm ${w.wasm_bytes} B. beside: JS ${w.beside.js_bytes} B, open ${w.beside.open_ms} ms, process ${w.beside.process_ms} ms. embedded: JS ${w.embedded.js_bytes} B, open ${w.embedded.open_ms} ms, process ${w.embedded.process_ms} ms. A start that never opens memory: ${w.start_without_memory.plain_ms} ms plain, ${w.start_without_memory.with_embedded_string_ms} ms carrying the base64 string`);
  }
}
