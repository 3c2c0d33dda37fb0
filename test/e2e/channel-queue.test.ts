// A queue channel end to end through dist/claw.mjs (docs/channels.md): examples/queue-agent (offline
// rules provider, no network) with its inbox bound in claw.runtime.yaml; messages written by `claw send`
// processes; an unknown sender gets a pairing code that `claw pair` approves; rate limit; SIGTERM.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { CLAW, ROOT, initParams, startClaw } from './helpers/claw-process.ts';

function claw(args: string[], cwd: string): Promise<{ code: number | null; out: any; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLAW, ...args], { cwd, env: { PATH: process.env.PATH ?? '' } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (code) => {
      let out: any;
      try {
        out = JSON.parse(stdout);
      } catch {}
      resolve({ code, out, stdout, stderr });
    });
  });
}
const waitFor = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

function agentDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-channel-e2e-'));
  const ex = join(ROOT, 'examples', 'queue-agent');
  // The example, with a rate limit whose refill (60 s) cannot happen during the test.
  writeFileSync(join(dir, 'claw.yaml'), readFileSync(join(ex, 'claw.yaml'), 'utf8').replace('rate_limit: { messages_per_minute: 30, burst: 5 }', 'rate_limit: { messages_per_minute: 1, burst: 3 }'));
  copyFileSync(join(ex, 'offline-rules.yaml'), join(dir, 'offline-rules.yaml'));
  writeFileSync(join(dir, 'claw.runtime.yaml'), 'data_dir: ./data\nchannels:\n  team-queue:\n    listen: fs:queue\n    fs: { poll_interval_ms: 50 }\n');
  return dir;
}

test('fs queue channel: pairing, claw pair, agent turns with the offline rules, tool call, rate limit, clean stop', async () => {
  const dir = agentDir();
  const run = startClaw(['run', 'claw.yaml'], { cwd: dir, env: { QUEUE_TOKEN: 'queue-token-value' } });
  const q = `fs:${join(dir, 'data', 'queue')}`;
  const say = (from: string, text: string, extra: string[] = []) => claw(['send', q, 'channel.message', JSON.stringify({ from, text }), ...extra], dir);
  try {
    const init = await run.request('claw.initialize', initParams());
    assert.ok(init.result, JSON.stringify(init) + run.stderr());
    await waitFor(() => existsSync(join(dir, 'data', 'queue', 'inbox')));

    // Unknown sender: -32050 with a pairing code for them.
    const first = await say('alice', 'hello');
    assert.is(first.code, 1, first.stderr);
    assert.is(first.out.error.code, -32050);
    const code = first.out.error.data.pairing_code as string;
    assert.match(code, /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/);
    assert.equal(Object.keys(first.out.error.data).sort(), ['channel', 'expires_at', 'pairing_code', 'reason']);

    // Another unknown sender gets their own code and never sees alice's.
    const bob = await say('bob', 'hello');
    assert.is(bob.out.error.code, -32050);
    assert.is.not(bob.out.error.data.pairing_code, code);
    assert.not.ok(bob.stdout.includes('alice') || bob.stdout.includes(code));

    // The operator lists and approves.
    const list = await claw(['pair', 'claw.yaml', '--list'], dir);
    assert.is(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^team-queue\\t${code}\\talice\\texpires `, 'm'));
    const wrong = await claw(['pair', 'claw.yaml', 'ZZZZ-ZZZZ'], dir);
    assert.is(wrong.code, 1);
    assert.is(wrong.stderr, 'claw pair: no pending pairing code ZZZZ-ZZZZ\n');
    const pair = await claw(['pair', 'claw.yaml', code.toLowerCase()], dir);
    assert.is(pair.code, 0, pair.stderr);
    assert.is(pair.stdout, 'paired alice on channel team-queue\n');

    // Paired: a real turn through the agent loop (offline rules provider).
    const hello = await say('alice', 'hello');
    assert.is(hello.code, 0, hello.stderr + run.stderr().slice(-2000));
    assert.equal(hello.out.result, { reply: 'Hello from the queue agent.', outcome: 'message', tool_calls: 0 });
    // A tool call through the gates, then the after_tool answer.
    const echo = await say('alice', 'echo ping 42');
    assert.is(echo.code, 0, echo.stderr);
    assert.equal({ ...echo.out.result, reply: undefined }, { reply: undefined, outcome: 'message', tool_calls: 1 });
    // The rules provider answers after_tool when the last message has role `tool` (docs/providers.md); the
    // loop reports tool results as a user message today, so its default answers. Either is the agent's reply.
    assert.ok(['Echoed: ping 42', "I only know 'hello' and 'echo <text>' offline."].includes(echo.out.result.reply), echo.out.result.reply);

    // Rate limit (burst 3: the refused first message counted too): the 4th message is -32051.
    const limited = await say('alice', 'hello');
    assert.is(limited.code, 1);
    assert.is(limited.out.error.code, -32051);
    assert.is(limited.out.error.data.reason, 'rate_limited');

    // Too long for max_message_length (2000) → -32602, from bob (his own bucket has tokens left).
    const long = await say('bob', 'x'.repeat(2001));
    assert.is(long.out.error.code, -32602);

    // The inbox takes only channel.message.
    const other = await claw(['send', q, 'claw.status'], dir);
    assert.is(other.out.error.code, -32601);

    run.child.kill('SIGTERM');
    const exit = await run.exited;
    assert.is(exit.code, 0, run.stderr().slice(-2000));
    assert.equal(readdirSync(join(dir, 'data', 'queue', 'inbox')), []);
    assert.equal(readdirSync(join(dir, 'data', 'queue', '.state', 'processing')), []);
    assert.is(readdirSync(join(dir, 'data', 'queue', 'archive')).length, 7, 'every message archived once');
    assert.not.ok(run.stderr().includes('queue-token-value'));
    assert.equal(run.garbage, []);
  } finally {
    run.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});


/** The example with an open channel, one `hold` tool that runs until the test creates `go`, and `policy`. */
function holdDir(policy: 'skip' | 'queue'): string {
  const dir = agentDir();
  const manifest = readFileSync(join(dir, 'claw.yaml'), 'utf8')
    .replace(/access_control:\n\s+mode: "pairing"\n\s+pairing: \{[^}]*\}/, 'access_control: { mode: "open" }')
    .replace('overlap_policy: "queue"', `overlap_policy: "${policy}"`)
    .replace('  tools:\n', '  tools:\n    - inline:\n        name: "hold"\n        description: "Waits for the test"\n        input_schema: { type: "object" }\n');
  assert.ok(manifest.includes('mode: "open"') && manifest.includes('name: "hold"'), 'manifest edited');
  writeFileSync(join(dir, 'claw.yaml'), manifest);
  writeFileSync(join(dir, 'offline-rules.yaml'), readFileSync(join(dir, 'offline-rules.yaml'), 'utf8').replace('rules:\n', 'rules:\n  - match: "^hold$"\n    tool_call: { tool: hold }\n'));
  writeFileSync(
    join(dir, 'claw.runtime.yaml'),
    `data_dir: ./data\nchannels:\n  team-queue:\n    listen: fs:queue\n    fs: { poll_interval_ms: 50 }\ntools:\n  hold:\n    exec: { bin: /bin/sh, argv: ["-c", "touch ${dir}/started; while [ -d ${dir} ] && [ ! -e ${dir}/go ]; do sleep 0.02; done; echo held"] }\n`,
  );
  return dir;
}

for (const policy of ['skip', 'queue'] as const) {
  test(`max_parallel 1, overlap_policy ${policy}: a message arriving during a running turn is ${policy === 'skip' ? 'answered busy, never run' : 'held and run after it'}`, async () => {
    const dir = holdDir(policy);
    const run = startClaw(['run', 'claw.yaml'], { cwd: dir, env: { QUEUE_TOKEN: 'queue-token-value' } });
    const q = `fs:${join(dir, 'data', 'queue')}`;
    const say = (text: string) => claw(['send', q, 'channel.message', JSON.stringify({ from: 'alice', text })], dir);
    try {
      const init = await run.request('claw.initialize', initParams());
      assert.ok(init.result, JSON.stringify(init) + run.stderr());
      await waitFor(() => existsSync(join(dir, 'data', 'queue', 'inbox')));
      const first = say('hold');
      await waitFor(() => existsSync(join(dir, 'started')));
      let secondDone = false;
      const second = say('hello').then((r) => ((secondDone = true), r));
      if (policy === 'skip') {
        const r = await second;
        assert.is(r.code, 1);
        assert.equal(r.out.error, {
          code: -32051,
          message: 'Channel rate limited: the channel is busy (max_parallel 1, overlap_policy skip); the message was not run',
          data: { channel: 'team-queue', reason: 'busy' },
        });
      } else {
        // claimed and waiting: not answered while the first turn holds the only slot
        await waitFor(() => readdirSync(join(dir, 'data', 'queue', '.state', 'processing')).length === 2);
        await new Promise((r) => setTimeout(r, 300));
        assert.is(secondDone, false, 'the queued message waits for the running turn');
      }
      writeFileSync(join(dir, 'go'), '');
      const a = await first;
      assert.is(a.code, 0, a.stderr);
      assert.is(a.out.result.tool_calls, 1);
      if (policy === 'queue') {
        const b = await second;
        assert.is(b.code, 0, b.stderr);
        assert.equal(b.out.result, { reply: 'Hello from the queue agent.', outcome: 'message', tool_calls: 0 });
      }
      run.child.kill('SIGTERM');
      assert.is((await run.exited).code, 0);
    } finally {
      run.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
