// A resolved secret never sits at rest (runtime profile §7, docs/memory.md "What the database holds"): an operator
// passes the provider key as a tool's arguments, over stdio and over the filesystem transport, retries it, and
// every file the runtime wrote — memory journal and snapshots, ledgers, audit (file and SQLite copy), telemetry,
// fs transport inbox/outbox/archive/.state — is searched for the value, raw and base64: zero hits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAW, initParams, startClaw } from './helpers/claw-process.ts';
import { agentDir, l3Manifest } from './memory-agent.ts';

const SECRET = 'sk-ant-at-rest-9f2c61d0b7e84a35';

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

function send(ipc: string, method: string, params: unknown, requestId: string): Promise<any> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLAW, 'send', `fs:${ipc}`, method, JSON.stringify(params), '--request-id', requestId], { env: { PATH: process.env.PATH ?? '' } });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', () => {
      try {
        resolve(JSON.parse(out));
      } catch {
        resolve(out);
      }
    });
  });
}

test('a secret passed as tool arguments is in no file the runtime wrote', async () => {
  const a = agentDir({ config: 'data_dir: ./data\n' });
  // Audit on (file and SQLite copy, outputs logged) and telemetry to a file: both see the arguments.
  const manifest = l3Manifest()
    .replace('- { id: "allow-all", action: "allow", scope: "all" }', '- { id: "allow-all", action: "allow", scope: "all" }\n        audit: { destination: "sqlite", retention: "1d", log_outputs: true }')
    .replace('  sandbox:\n', '  telemetry:\n    inline:\n      exporters:\n        - type: "file"\n          path: "out/telemetry.jsonl"\n  sandbox:\n');
  writeFileSync(a.manifest, manifest);
  const ipc = join(a.dir, 'ipc');
  const c = startClaw(['run', a.manifest, '--listen', `fs:${ipc}`], { cwd: a.dir, env: { ANTHROPIC_KEY: SECRET, LOCAL_CLI_TOKEN: 'cli-token-value' } });
  try {
    c.send({ jsonrpc: '2.0', id: 'init', method: 'claw.initialize', params: initParams() });
    const init = await c.waitFor((m) => m.id === 'init', 30_000); // audit and memory open at start: slow on a loaded board
    assert.ok(init.result, JSON.stringify(init) + c.stderr().slice(-2000));
    const call = (rid: string) => ({ name: 'search', arguments: { query: SECRET }, context: { request_id: rid, identity: 'full-agent' } });
    const r1 = await c.request('claw.tool.call', call('stdio-1'));
    assert.ok(r1.result, JSON.stringify(r1));
    assert.not.ok(JSON.stringify(r1).includes(SECRET), 'the reply is redacted');
    const retry = await c.request('claw.tool.call', call('stdio-1'));
    assert.equal(retry.result, r1.result, 'a retry gets the first answer');
    const viaFs = await send(ipc, 'claw.tool.call', call('fs-1'), 'fs-1');
    assert.ok(viaFs.result, JSON.stringify(viaFs));
    assert.equal(await send(ipc, 'claw.tool.call', call('fs-1'), 'fs-1'), viaFs);
    // A refusal quoting the arguments (an unknown identity) is not kept raw either.
    await c.request('claw.tool.call', { ...call('stdio-2'), context: { request_id: 'stdio-2', identity: SECRET } });
    // With a listening transport, stdin at EOF keeps the agent serving: SIGTERM ends it (a clean shutdown).
    c.child.kill('SIGTERM');
    assert.is((await c.exited).code, 0);
  } finally {
    c.kill();
  }
  const written = [...files(join(a.dir, 'data')), ...files(join(a.dir, 'out')), ...files(ipc)];
  assert.ok(written.some((f) => f.includes('memory')), `the memory database was written: ${written.join(', ')}`);
  assert.ok(written.some((f) => f.includes('archive')), 'the fs transport archived its requests');
  const b64 = Buffer.from(SECRET).toString('base64').slice(0, 24);
  const hits = written.filter((f) => {
    const bytes = readFileSync(f);
    return bytes.includes(SECRET) || bytes.includes(b64) || bytes.includes(Buffer.from(SECRET, 'utf16le'));
  });
  assert.equal(hits, [], 'files holding the secret');
  rmSync(a.dir, { recursive: true, force: true });
});

test.run();
