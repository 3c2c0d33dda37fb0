// User-written regular expressions never stall the runtime: the spec §5.8 example blocked pattern against a
// 30 KB command, and a catastrophic input_schema `pattern` against a large argument, are checked while
// claw.status still answers within 100 ms. Restricted shell mode refuses an interpreter as `bin`, and says at
// STARTING that blocked lists are tripwires.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agent, manifest, type Agent } from './helpers/l2-agent.ts';

const TOOLS = `    - inline:
        name: "shell"
        description: "Run a program"
        input_schema:
          type: "object"
          properties:
            bin: { type: "string" }
            argv: { type: "array", items: { type: "string" } }
          required: ["bin"]
    - inline:
        name: "tag"
        description: "Echo a tag made of a's"
        input_schema:
          type: "object"
          properties:
            text: { type: "string", pattern: "^(a+)+$" }
          required: ["text"]`;

const SANDBOX = `      level: "process"
      capabilities:
        shell:
          mode: "restricted"
          blocked_patterns: [".*password.*=.*"]`;

/** Sends the tool call, then claw.status at once; returns how long the status reply took and both replies. */
async function statusWhile(a: Agent, name: string, args: unknown, tag: string): Promise<{ ms: number; call: any; status: any }> {
  const call = a.call(name, args, tag, `${tag}-call`).catch((e) => ({ error: String(e) }));
  const t0 = performance.now();
  const status = await a.claw.request('claw.status', {}, `${tag}-status`);
  const ms = performance.now() - t0;
  return { ms, call: await call, status };
}

/**
 * The fastest of three tries. A backtracking check holds the loop for seconds to minutes on every try; a linear
 * one takes milliseconds, and a shared, loaded test machine can still stretch one try past 100 ms.
 */
async function bestOf3(a: Agent, name: string, args: unknown, tag: string): Promise<{ ms: number; call: any; status: any }> {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await statusWhile(a, name, args, `${tag}-${i}`));
  return runs.reduce((x, y) => (y.ms < x.ms ? y : x));
}

let a: Agent;

test.before(async () => {
  a = await agent(manifest({ tools: TOOLS, sandbox: SANDBOX }), 'tools:\n  tag: { builtin: echo }\n');
});
test.after(async () => {
  // A runtime stalled in a check would not read its stdin for minutes: never leave it behind.
  const stalled = setTimeout(() => a?.claw.kill(), 5000);
  await a?.close();
  clearTimeout(stalled);
});

test('STARTING says that blocked lists are tripwires and points to exec bindings', () => {
  assert.match(a.claw.stderr(), /tripwires, not confinement.*exec tools/);
});

test('a 30 KB command against `.*password.*=.*`: claw.status answers within 100 ms', async () => {
  // Warm up the process (first calls compile code); the measured call is the adversarial one.
  await statusWhile(a, 'shell', { bin: 'echo', argv: ['warm'] }, 'warm');
  const argv = ['password '.repeat(3400)];
  const { ms, call, status } = await bestOf3(a, 'shell', { bin: 'echo', argv }, 'redos-shell');
  assert.is(status.result.state, 'READY');
  assert.ok(call.result, JSON.stringify(call.error));
  assert.ok(ms < 100, `claw.status took ${ms.toFixed(0)} ms`);
  const blocked = await a.call('shell', { bin: 'echo', argv: [`${argv[0]}=x`] }, 'redos-shell-blocked');
  assert.is(blocked.error?.code, -32010);
});

test('a catastrophic input_schema pattern on a 50 KB argument: claw.status answers within 100 ms', async () => {
  const { ms, call, status } = await bestOf3(a, 'tag', { text: `${'a'.repeat(50_000)}!` }, 'redos-schema');
  assert.is(status.result.state, 'READY');
  assert.is(call.error?.code, -32602);
  assert.ok(ms < 100, `claw.status took ${ms.toFixed(0)} ms`);
  const ok = await a.call('tag', { text: 'aaaa' }, 'tag-ok');
  assert.equal(ok.result.content, [{ type: 'text', text: 'aaaa' }]);
});

test('restricted mode: /bin/sh -c (and env sh -c) is a command string and is refused', async () => {
  for (const args of [{ bin: '/bin/sh', argv: ['-c', 'echo pwned'] }, { bin: 'env', argv: ['sh', '-c', 'echo pwned'] }, { bin: 'python3', argv: ['-c', 'print("pwned")'] }]) {
    const r = await a.call('shell', args, `interp-${args.bin}`);
    assert.is(r.error?.code, -32010, JSON.stringify(r));
    assert.not.match(JSON.stringify(r), 'pwned"');
  }
});

test.run();
