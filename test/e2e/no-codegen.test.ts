// The runtime never generates code from strings (docs/startup.md): under node's hardening flag
// --disallow-code-generation-from-strings (here through NODE_OPTIONS, so the builtin worker it re-executes gets it
// too) a Level 2 session runs its tools and a Level 3 session stores and queries memory (sql.js, its wasm).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { initParams, startClaw } from './helpers/claw-process.ts';
import { manifest } from './helpers/l2-agent.ts';
import { agentDir, all, startAgent, store } from './memory-agent.ts';

const FLAG = { NODE_OPTIONS: '--disallow-code-generation-from-strings' };

test('the flag is in force for the runtime: new Function throws there', () => {
  const r = spawnSync(process.execPath, ['-e', 'try { new Function("") ; console.log("allowed") } catch (e) { console.log(e.name) }'], { env: { ...process.env, ...FLAG }, encoding: 'utf8' });
  assert.is(r.stdout.trim(), 'EvalError');
});

test('Level 2: tools (a builtin, an exec tool, a builtin in the worker) under --disallow-code-generation-from-strings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-nocodegen-'));
  const c = (() => {
    writeFileSync(
      join(dir, 'claw.yaml'),
      manifest({
        tools: `    - inline:
        name: "hello"
        description: "exec tool"
        input_schema: { type: "object" }
    - inline:
        name: "file-read"
        description: "builtin in a worker"
        input_schema: { type: "object" }`,
      }),
    );
    writeFileSync(join(dir, 'claw.runtime.yaml'), 'data_dir: ./data\ntools:\n  hello:\n    exec: { bin: /bin/echo, argv: ["hi", "{{who}}"] }\n');
    writeFileSync(join(dir, 'note.txt'), 'from a file');
    return startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, env: FLAG });
  })();
  try {
    const init = await c.request('claw.initialize', initParams(), 'init');
    assert.is(init.result?.conformanceLevel, 'level-2', JSON.stringify(init) + c.stderr().slice(-2000));
    const call = (name: string, args: unknown, id: string) => c.request('claw.tool.call', { name, arguments: args, context: { request_id: id, identity: 'standard-agent' } });
    assert.equal((await call('echo', { text: 'no eval' }, 'r1')).result, { content: [{ type: 'text', text: 'no eval' }] });
    assert.equal((await call('hello', { who: 'board' }, 'r2')).result, { content: [{ type: 'text', text: 'hi board\n' }] });
    const read = await call('file-read', { path: join(dir, 'note.txt') }, 'r3');
    assert.equal(read.result, { content: [{ type: 'text', text: 'from a file' }] }, JSON.stringify(read) + c.stderr().slice(-2000));
  } finally {
    c.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Level 3: memory (sql.js) and tools under --disallow-code-generation-from-strings', async () => {
  const a = agentDir();
  const c = await startAgent(a, { env: FLAG });
  try {
    const s = await store(c, 'context', [{ content: 'kept without eval', metadata: { role: 'user' } }]);
    assert.ok(s.result, JSON.stringify(s) + c.stderr().slice(-2000));
    const entries = await all(c);
    assert.equal(entries.map((e) => e.content), ['kept without eval']);
    const t = await c.request('claw.tool.call', { name: 'search', arguments: { query: 'x' }, context: { request_id: 'r1', identity: 'full-agent' } });
    assert.ok(t.result, JSON.stringify(t));
  } finally {
    c.kill();
    rmSync(a.dir, { recursive: true, force: true });
  }
});

test.run();
