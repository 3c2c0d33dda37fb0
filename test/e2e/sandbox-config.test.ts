// Sandbox behaviour that comes from the manifest and claw.runtime.yaml, end to end: levels this board
// cannot provide, named downgrades, output caps, secret injection modes, unbound tools.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, startClaw } from './helpers/claw-process.ts';
import { agent, manifest, SHELL_TOOL } from './helpers/l2-agent.ts';

async function initError(m: string, runtime = ''): Promise<any> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-sbx-'));
  writeFileSync(join(dir, 'claw.yaml'), m);
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\n${runtime}`);
  const claw = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir });
  try {
    const r = await claw.request('claw.initialize', initParams(), 'init');
    const status = await claw.request('claw.status', {}, 'st');
    return { r, status };
  } finally {
    await claw.end();
  }
}

const container = '      level: "container"\n      runtime: "docker"';

test('a level this board cannot provide is refused at STARTING, never silently downgraded', async () => {
  const { r, status } = await initError(manifest({ sandbox: container }));
  assert.is(r.error.code, -32010);
  assert.match(r.error.message, 'container');
  assert.match(r.error.message, 'allow_downgrade');
  assert.equal(status.result.state, 'ERROR');
});

test('…and runs when the runtime configuration names the downgrade', async () => {
  const a = await agent(manifest({ sandbox: container }), 'sandbox:\n  allow_downgrade: { container: process }\n');
  try {
    const r = await a.call('echo', { text: 'downgraded, knowingly' }, 'dg-1');
    assert.equal(r.result.content, [{ type: 'text', text: 'downgraded, knowingly' }]);
    assert.match(a.claw.stderr(), 'container');
  } finally {
    await a.close();
  }
});

test('a tool with no implementation stops the agent at STARTING with a message saying how to bind it', async () => {
  const unbound = `    - inline:
        name: "weather"
        description: "Weather"
        input_schema: { type: "object" }`;
  const { r } = await initError(manifest({ tools: unbound }));
  assert.is(r.error.code, -32602);
  assert.match(r.error.message, 'tools.weather');
});

test('max_output_bytes truncates and says so', async () => {
  const a = await agent(
    manifest({
      tools: SHELL_TOOL,
      sandbox: '      level: "process"\n      capabilities:\n        shell: { mode: "full" }\n      resource_limits:\n        max_output_bytes: 64',
    }),
  );
  try {
    const r = await a.call('shell', { command: 'head -c 100000 /dev/zero | tr "\\\\0" x' }, 'cap-1');
    const text: string = r.result.content.map((b: any) => b.text).join('');
    assert.ok(text.startsWith('x'.repeat(64)), text.slice(0, 80));
    assert.not.ok(text.startsWith('x'.repeat(65)));
    assert.match(text, 'truncated');
  } finally {
    await a.close();
  }
});

test('secrets reach an exec tool only as secrets.injection says, and never leave in its output', async () => {
  const tools = `    - inline:
        name: "show-secret"
        description: "prints the secret's length and the value"
        input_schema: { type: "object" }`;
  const bind = 'tools:\n  show-secret:\n    exec:\n      bin: /bin/sh\n      argv: ["-c", "echo len=${#TOOL_TOKEN}; echo val=$TOOL_TOKEN; [ -n \\"$TOOL_TOKEN_FILE\\" ] && echo file=$(cat $TOOL_TOKEN_FILE)"]\n      secrets: [TOOL_TOKEN]\n';
  const run = async (injection: string) => {
    const sb = `      level: "process"\n      capabilities:\n        secrets: { injection: "${injection}" }`;
    const dir = mkdtempSync(join(tmpdir(), 'claw-sec-'));
    writeFileSync(join(dir, 'claw.yaml'), manifest({ tools, sandbox: sb }));
    writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\n${bind}`);
    const claw = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, env: { TOOL_TOKEN: 'tok-0123456789-secret' } });
    try {
      await claw.request('claw.initialize', initParams(), 'init');
      const r = await claw.request('claw.tool.call', { name: 'show-secret', arguments: {}, context: { request_id: `s-${injection}`, identity: 'standard-agent' } });
      const everything = JSON.stringify(claw.messages) + claw.stderr();
      assert.not.match(everything, 'tok-0123456789-secret', `${injection}: the value never appears on stdout or stderr`);
      return r.result.content[0].text as string;
    } finally {
      await claw.end();
    }
  };
  assert.match(await run('environment'), 'len=21\nval=[REDACTED]');
  assert.match(await run('host-boundary'), 'len=0\nval=\n');
  const fileMount = await run('file-mount');
  assert.match(fileMount, 'len=0');
  assert.match(fileMount, 'file=[REDACTED]');
});

test.run();
