// Memory through dist/claw.mjs on every runtime of .build/runtimes (scripts/install-runtimes.sh): `adapter: auto`
// keeps a new memory database on the journalled path on every runtime, Node 22 and Bun included (bytes written
// per entry on flash: docs/memory.md "Choosing the adapter") — held by sql.js on Node, by bun:sqlite on Bun; a
// database node:sqlite made stays native. stderr stays JSON lines (Node 22's ExperimentalWarning for node:sqlite
// is not printed). A journalled database written on one runtime opens on another with every entry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLAW, ROOT, initParams } from './helpers/claw-process.ts';
import { stderrRecords } from './helpers/e2e-util.ts';
import { agentDir, ENTRY_ID } from './memory-agent.ts';

const RUNTIMES: [string, string, 'sqljs' | 'native', string][] = [
  ['node (this one)', process.execPath, 'sqljs', 'sql.js'],
  ['node18', join(ROOT, '.build/runtimes/node18/node_modules/.bin/node'), 'sqljs', 'sql.js'],
  ['node22', join(ROOT, '.build/runtimes/node22/node_modules/.bin/node'), 'sqljs', 'sql.js'],
  ['bun', join(ROOT, '.build/runtimes/bun/node_modules/.bin/bun'), 'sqljs', 'bun:sqlite'],
];
const dirs: string[] = [];

/** One NDJSON session: initialize, then `lines`; returns the replies by id and the stderr records. */
function session(bin: string, dir: string, manifest: string, lines: object[]) {
  const input = [{ jsonrpc: '2.0', id: 'init', method: 'claw.initialize', params: initParams() }, ...lines].map((l) => JSON.stringify(l)).join('\n') + '\n';
  const r = spawnSync(bin, [CLAW, 'run', manifest], { cwd: dir, input, encoding: 'utf8', timeout: 60_000 });
  assert.is(r.status, 0, r.stderr);
  const replies = new Map(r.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((m) => [m.id, m]));
  return { replies, logs: stderrRecords(r.stderr) };
}
const storeLine = (id: number, content: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'claw.memory.store',
  params: { store: 'context', entries: [{ content }], context: { request_id: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}` } },
});
const queryLine = (id: number) => ({ jsonrpc: '2.0', id, method: 'claw.memory.query', params: { store: 'context', query: { type: 'semantic', text: 'deadline' } } });

for (const [name, bin, adapter, engine] of RUNTIMES) {
  (existsSync(bin) ? test : test.skip)(`${name}: store → query through the ${adapter} adapter on ${engine}, stderr JSON only`, () => {
    const a = agentDir();
    dirs.push(a.dir);
    const s = session(bin, a.dir, a.manifest, [storeLine(1, 'Project deadline is March 15'), queryLine(2)]);
    const id = s.replies.get(1).result.ids[0];
    assert.match(id, ENTRY_ID);
    assert.equal(
      s.replies.get(2).result.entries.map((e: any) => [e.id, e.content, e.score]),
      [[id, 'Project deadline is March 15', 9.99999000001e-7]],
    );
    const open = s.logs.find((l) => l.msg === 'memory open');
    assert.is(open?.adapter, adapter);
    assert.is(open?.engine, engine);
    // The V8 tier of the wasm is logged only where sql.js runs.
    assert.is('wasm' in open!, engine === 'sql.js');
    assert.ok(existsSync(join(a.dir, '.claw-data', 'memory', 'memory-0.db.claw-journal')), 'journalled layout');
  });
}

const bun = RUNTIMES[3][1];
(existsSync(bun) ? test : test.skip)('a journalled database moves Node → Bun → Node with every entry; adapter: sqljs on Bun is sql.js', () => {
  const a = agentDir();
  dirs.push(a.dir);
  const first = session(process.execPath, a.dir, a.manifest, [storeLine(1, 'deadline on node')]);
  const onBun = session(bun, a.dir, a.manifest, [storeLine(2, 'deadline on bun'), queryLine(3)]);
  assert.is(onBun.logs.find((l) => l.msg === 'memory open')?.engine, 'bun:sqlite');
  const ids = [first.replies.get(1).result.ids[0], onBun.replies.get(2).result.ids[0]].sort();
  assert.equal(onBun.replies.get(3).result.entries.map((e: any) => e.id).sort(), ids);
  const back = session(process.execPath, a.dir, a.manifest, [queryLine(4)]);
  assert.is(back.logs.find((l) => l.msg === 'memory open')?.engine, 'sql.js');
  assert.equal(back.replies.get(4).result.entries.map((e: any) => e.id).sort(), ids);
  agentDir({ dir: a.dir, config: 'memory:\n  adapter: sqljs\n' });
  const named = session(bun, a.dir, a.manifest, [queryLine(5)]);
  assert.is(named.logs.find((l) => l.msg === 'memory open')?.engine, 'sql.js');
  assert.equal(named.replies.get(5).result.entries.map((e: any) => e.id).sort(), ids);
});

const node18 = RUNTIMES[1][1];
const node22 = RUNTIMES[2][1];
(existsSync(node18) && existsSync(node22) ? test : test.skip)('a sql.js database from Node 18 opened on Node 22 stays on sql.js, entries intact', () => {
  const a = agentDir();
  dirs.push(a.dir);
  const first = session(node18, a.dir, a.manifest, [storeLine(1, 'deadline one'), storeLine(2, 'deadline two')]);
  const ids = [first.replies.get(1).result.ids[0], first.replies.get(2).result.ids[0]];
  const later = session(node22, a.dir, a.manifest, [queryLine(3)]);
  assert.is(later.logs.find((l) => l.msg === 'memory open')?.adapter, 'sqljs');
  assert.equal(later.replies.get(3).result.entries.map((e: any) => e.id).sort(), [...ids].sort());
});

// Issue 4: the automatic choice is overridable in the runtime configuration (claw.runtime.yaml `memory.adapter`).
(existsSync(node22) ? test : test.skip)('claw.runtime.yaml memory.adapter: sqljs on Node 22 (which has node:sqlite) uses sql.js; native uses node:sqlite', () => {
  for (const [forced, expected] of [['sqljs', 'sqljs'], ['native', 'native'], ['auto', 'sqljs']] as const) {
    const a = agentDir({ config: `memory:\n  adapter: ${forced}\n` });
    dirs.push(a.dir);
    const s = session(node22, a.dir, a.manifest, [storeLine(1, 'deadline forced'), queryLine(2)]);
    assert.is(s.logs.find((l) => l.msg === 'memory open')?.adapter, expected, `adapter: ${forced}`);
    assert.equal(s.replies.get(2).result.entries.map((e: any) => e.id), [s.replies.get(1).result.ids[0]]);
    // The sql.js layout is the snapshot plus its journal (docs/memory.md); node:sqlite keeps neither.
    assert.is(existsSync(join(a.dir, '.claw-data', 'memory', 'memory-0.db.claw-journal')), expected === 'sqljs', `journal for ${forced}`);
  }
});
(existsSync(node22) ? test : test.skip)('auto on Node 22: a memory database node:sqlite made stays on node:sqlite, entries intact', () => {
  const a = agentDir({ config: 'memory:\n  adapter: native\n' });
  dirs.push(a.dir);
  const first = session(node22, a.dir, a.manifest, [storeLine(1, 'deadline native')]);
  assert.is(first.logs.find((l) => l.msg === 'memory open')?.adapter, 'native');
  agentDir({ dir: a.dir }); // the same agent and data, claw.runtime.yaml back to `adapter: auto` (the default)
  const later = session(node22, a.dir, a.manifest, [queryLine(2)]);
  assert.is(later.logs.find((l) => l.msg === 'memory open')?.adapter, 'native');
  assert.equal(later.replies.get(2).result.entries.map((e: any) => e.id), [first.replies.get(1).result.ids[0]]);
});
(existsSync(node18) ? test : test.skip)('claw.runtime.yaml memory.adapter: native on a runtime without one → -32030 saying so, the agent stays up', () => {
  const a = agentDir({ config: 'memory:\n  adapter: native\n' });
  dirs.push(a.dir);
  const s = session(node18, a.dir, a.manifest, [storeLine(1, 'x'), { jsonrpc: '2.0', id: 2, method: 'claw.status' }]);
  const err = s.replies.get(1).error;
  assert.is(err.code, -32030);
  assert.match(err.message, /^Memory backend error: no native SQLite in this runtime \(node:sqlite needs Node >= 22\.5, or Bun\); use adapter 'sqljs'/);
  assert.ok(s.replies.get(2).result, JSON.stringify(s.replies.get(2)));
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
