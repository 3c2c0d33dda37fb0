// The wasm tier (docs/memory.md "Memory budget") is set before anything compiles: a start that opened the memory
// database (sql.js on V8's baseline compiler) leaves code caches the next start accepts as they are. A V8 flag set
// later would be stamped into those caches and make every next start reject and rewrite them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const dirs: string[] = [];

function start(agentDir: string, cacheDir: string): string {
  const session = [
    { jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: { protocolVersion: '0.3.0', clientInfo: { name: 't', version: '1' }, manifest: parse(readFileSync(join(agentDir, 'claw.yaml'), 'utf8')), capabilities: {} } },
    { jsonrpc: '2.0', id: 2, method: 'claw.memory.query', params: { store: 'facts', query: { type: 'semantic', text: 'kettle' } } },
    { jsonrpc: '2.0', id: 3, method: 'claw.memory.query', params: { store: 'conversation', query: { type: 'time-range', time_range: {} } } },
  ];
  const r = spawnSync(process.execPath, [CLAW, 'run', join(agentDir, 'claw.yaml')], {
    cwd: agentDir,
    input: session.map((m) => JSON.stringify(m)).join('\n') + '\n',
    encoding: 'utf8',
    timeout: 30_000,
    // A 256 MB budget, as on a small board: sql.js on the baseline tier, the V8 flag set.
    env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cacheDir, CLI_TOKEN: 'x', CLAW_MEMORY_BUDGET_MB: '256' },
  });
  assert.is(r.status, 0, r.stderr);
  const replies = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(replies.find((m) => m.id === 2)?.result, r.stdout);
  return r.stderr;
}

test('a start that opened sql.js leaves code caches the next start uses without rewriting any', () => {
  const agentDir = mkdtempSync(join(tmpdir(), 'claw-wasm-cache-'));
  dirs.push(agentDir);
  // The Level 3 bench agent, its tools in-process (no bubblewrap needed here).
  cpSync(join(ROOT, 'scripts', 'bench', 'level3'), agentDir, { recursive: true });
  const file = join(agentDir, 'claw.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('level: "process"', 'level: "none"'));
  const cacheDir = join(agentDir, 'cache');
  const stderr = start(agentDir, cacheDir);
  assert.ok(/"msg":"memory open"[^\n]*"wasm":"baseline"/.test(stderr), stderr);
  const first = new Map(readdirSync(cacheDir).filter((f) => f.endsWith('.v8cache')).map((f) => [f, statSync(join(cacheDir, f))]));
  assert.ok([...first.keys()].some((f) => f.startsWith('claw-')), 'the start-up file has a cache');
  assert.ok([...first.keys()].some((f) => f.startsWith('sql-wasm-')), 'so has the sql.js glue');
  start(agentDir, cacheDir);
  for (const f of readdirSync(cacheDir).filter((x) => x.endsWith('.v8cache'))) {
    const before = first.get(f);
    assert.ok(before, `${f}: a new cache file on the second start`);
    const now = statSync(join(cacheDir, f));
    assert.ok(now.ino === before.ino && now.mtimeMs === before.mtimeMs, `${f} was rewritten: V8 rejected it`);
  }
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
test.run();
