// dist/claw.mjs must run on Node 18, 20, 22 and Bun (issue: "no Node-22-only APIs without a fallback").
// scripts/install-runtimes.sh (run by .ci/run) puts the other runtimes under .build/runtimes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLAW, ROOT, initParams } from './helpers/claw-process.ts';
import { manifest } from './helpers/l2-agent.ts';

const RUNTIMES: [string, string][] = [
  ['node (this one)', process.execPath],
  ['node18', join(ROOT, '.build/runtimes/node18/node_modules/.bin/node')],
  ['node22', join(ROOT, '.build/runtimes/node22/node_modules/.bin/node')],
  ['bun', join(ROOT, '.build/runtimes/bun/node_modules/.bin/bun')],
];
const session = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8');

for (const [name, bin] of RUNTIMES) {
  const present = existsSync(bin);
  (present ? test : test.skip)(`${name}: a full Level 1 session and claw validate`, () => {
    const run = spawnSync(bin, [CLAW, 'run', 'examples/minimal/claw.yaml'], { cwd: ROOT, input: session, encoding: 'utf8', timeout: 20_000 });
    assert.is(run.status, 0, run.stderr);
    const replies = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(replies, [
      { jsonrpc: '2.0', id: 1, result: { protocolVersion: '0.3.0', agentInfo: { name: 'minimal-bot', version: '0.1.0' }, conformanceLevel: 'level-1', capabilities: {} } },
      { jsonrpc: '2.0', id: 2, result: { state: 'READY', uptime_ms: replies[1].result.uptime_ms } },
      { jsonrpc: '2.0', id: 3, result: { drained: true } },
    ]);
    const v = spawnSync(bin, [CLAW, 'validate', 'examples/home-agent/claw.yaml', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    assert.is(v.status, 0, v.stderr);
    assert.is(JSON.parse(v.stdout).valid, true);
  });
}

// Level 2 on each runtime: the gates, the sandbox runner (child processes, process groups) and the
// builtin worker (the bundle re-executed by the same runtime) must all work there too.
const l2 = manifest({
  tools: `    - inline:
        name: "hello"
        description: "exec tool"
        input_schema: { type: "object" }
    - inline:
        name: "file-read"
        description: "builtin in a worker"
        input_schema: { type: "object" }`,
  sandbox: '      level: "process"',
});
for (const [name, bin] of RUNTIMES) {
  const present = existsSync(bin);
  (present ? test : test.skip)(`${name}: a Level 2 session (builtin, exec tool, worker builtin)`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-rt-'));
    writeFileSync(join(dir, 'claw.yaml'), l2);
    writeFileSync(join(dir, 'claw.runtime.yaml'), 'data_dir: ./data\ntools:\n  hello:\n    exec: { bin: /bin/echo, argv: ["hi", "{{who}}"] }\n');
    writeFileSync(join(dir, 'note.txt'), 'from a file');
    const call = (id: number, tool: string, args: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.tool.call', params: { name: tool, arguments: args, context: { request_id: `r${id}`, identity: 'standard-agent' } } });
    const input = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() }),
      call(2, 'echo', { text: 'same everywhere' }),
      call(3, 'hello', { who: 'board' }),
      call(4, 'file-read', { path: join(dir, 'note.txt') }),
    ].join('\n') + '\n';
    // Replies come in completion order; stdin stays open until all four are in.
    const env = { ...process.env, CLAW_CACHE_DIR: join(dir, 'cache') };
    const run = spawnSync('sh', ['-c', `(cat; sleep 2) | "$0" "$@"`, bin, CLAW, 'run', join(dir, 'claw.yaml')], { cwd: dir, input, encoding: 'utf8', timeout: 30_000, env });
    const byId = new Map(run.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((m) => [m.id, m]));
    assert.is(byId.get(1)?.result?.conformanceLevel, 'level-2', run.stderr.slice(-2000));
    assert.equal(byId.get(2)?.result, { content: [{ type: 'text', text: 'same everywhere' }] });
    assert.equal(byId.get(3)?.result, { content: [{ type: 'text', text: 'hi board\n' }] });
    assert.equal(byId.get(4)?.result, { content: [{ type: 'text', text: 'from a file' }] }, JSON.stringify(byId.get(4)));
    // The sandbox's spawned probes are kept for the next start (src/sandbox/probe-cache.ts) on every runtime,
    // those without process.getBuiltinModule (Node 18, Node 20 < 20.16) included.
    assert.ok(existsSync(join(dir, 'cache', 'sandbox-probes.json')), 'the sandbox probes were cached');
  });
}

test.run();
