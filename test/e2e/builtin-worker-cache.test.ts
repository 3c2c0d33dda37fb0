// The builtin worker (an OS-touching builtin under `level: process`: our bundle re-run as the tool's child) keeps
// no V8 code cache: its HOME is the tool's working directory, the first rw mount, so a cache would be hidden files
// in the agent's workspace, and a file a tool planted there would become code in a later worker
// (src/node/code-cache.ts cacheCommand).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLAW, initParams } from './helpers/claw-process.ts';
import { manifest } from './helpers/l2-agent.ts';

test('a file-read builtin in the worker, with an rw mount as its working directory, writes no cache there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-worker-cache-'));
  try {
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'note.txt'), 'from the workspace');
    writeFileSync(
      join(dir, 'claw.yaml'),
      manifest({
        tools: `    - inline:
        name: "file-read"
        description: "builtin in a worker"
        input_schema: { type: "object" }`,
        sandbox: `      level: "process"
      capabilities:
        network: { mode: "deny" }
        filesystem:
          mode: "scoped"
          mount_paths:
            - { path: "${ws}", permissions: "rw" }`,
      }),
    );
    writeFileSync(join(dir, 'claw.runtime.yaml'), 'data_dir: ./data\n');
    const call = (id: number) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.tool.call', params: { name: 'file-read', arguments: { path: join(ws, 'note.txt') }, context: { request_id: `r${id}`, identity: 'standard-agent' } } });
    const input = [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() }), call(2), call(3)].join('\n') + '\n';
    const env = { ...process.env, CLAW_CACHE_DIR: join(dir, 'cache') };
    const run = spawnSync('sh', ['-c', '(cat; sleep 3) | "$0" "$@"', process.execPath, CLAW, 'run', join(dir, 'claw.yaml')], { cwd: dir, input, encoding: 'utf8', timeout: 30_000, env });
    const byId = new Map(run.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((m) => [m.id, m]));
    for (const id of [2, 3]) assert.equal(byId.get(id)?.result, { content: [{ type: 'text', text: 'from the workspace' }] }, run.stderr.slice(-1500));
    assert.not.ok(existsSync(join(ws, '.cache')), `no cache in the workspace: ${readdirSync(ws).join(' ')}`);
    assert.equal(readdirSync(ws), ['note.txt']);
    assert.not.ok(readdirSync(join(dir, 'cache')).some((n) => n.includes('__builtin')), 'and none for the worker in the runtime\'s own cache');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
