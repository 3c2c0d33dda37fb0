// No silent channels (docs/channels.md "What this runtime serves"): a Channel whose type, transport or
// feature this runtime does not serve is a `claw validate` warning (exit 3 with --strict) and is refused at
// STARTING with a message naming it; a served type that is not bound is refused too, never ignored.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClaw, startClaw, initParams } from './helpers/claw-process.ts';

const channel = (name: string, type: string, transport = 'polling', extra = '') =>
  `    - inline:\n        name: "${name}"\n        type: "${type}"\n        transport: "${transport}"\n        auth: { secret_ref: "TOKEN" }\n${extra}`;
const manifest = (channels: string[]) => `claw: "0.3.0"
kind: Claw
metadata: { name: "home" }
spec:
  identity: { inline: { personality: "Test agent." } }
  providers:
    - inline: { protocol: "openai-compatible", endpoint: "http://localhost:11434/v1", model: "m", auth: { type: "none" } }
  channels:
${channels.join('')}`;

test('claw validate: unserved channel types, transports and features are warnings; --strict exits 3', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-unserved-'));
  try {
    writeFileSync(join(dir, 'claw.yaml'), manifest([channel('dc', 'discord'), channel('tg', 'telegram', 'webhook'), channel('sl', 'slack', 'websocket'), channel('q', 'queue', 'polling', '        trigger: { queue_name: "x" }\n        features: { voice: true }\n'), channel('t2', 'telegram', 'polling', '        trigger: { schedule: "0 * * * *", max_parallel: 1 }\n')]));
    const plain = await runClaw(['validate', 'claw.yaml'], { cwd: dir });
    assert.is(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /channels\.dc\.type  warning: channel dc: type discord is not served by this runtime/);
    assert.match(plain.stderr, /channel tg: transport webhook is not served for type telegram \(served: polling\)/);
    assert.match(plain.stderr, /channel sl: type slack is not served/);
    assert.match(plain.stderr, /channel q: features\.voice is not served/);
    assert.match(plain.stderr, /channel t2: trigger\.schedule is not served for type telegram/);
    // Telegram channels that no claw.runtime.yaml binds would serve nobody: warned too.
    assert.match(plain.stderr, /channel tg: type telegram is served only when bound in claw.runtime.yaml \(channels: \{ tg: \{ telegram: \{\} \} \}\)/);
    assert.match(plain.stderr, /valid Claw, 7 warnings/);
    const strict = await runClaw(['validate', 'claw.yaml', '--strict'], { cwd: dir });
    assert.is(strict.code, 3, strict.stderr);
    const json = await runClaw(['validate', 'claw.yaml', '--json'], { cwd: dir });
    const out = JSON.parse(json.stdout);
    assert.is(out.valid, true);
    assert.equal(out.warnings.map((w: any) => `${w.channel}.${w.path}`), ['dc.type', 'tg.transport', 'sl.type', 'q.features.voice', 't2.trigger.schedule', 'tg.type', 't2.type']);
    // A served, bound manifest has no warning and --strict exits 0.
    writeFileSync(join(dir, 'ok.yaml'), manifest([channel('tg', 'telegram')]));
    writeFileSync(join(dir, 'claw.runtime.yaml'), 'channels:\n  tg:\n    telegram: {}\n');
    const ok = await runClaw(['validate', 'ok.yaml', '--strict'], { cwd: dir });
    assert.is(ok.code, 0, ok.stderr);
    assert.not.match(ok.stderr, /warning/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function initializeWith(channels: unknown[]) {
  const dir = mkdtempSync(join(tmpdir(), 'claw-unserved-'));
  const c = startClaw(['run'], { cwd: dir });
  try {
    const p = initParams() as any;
    p.manifest.spec.channels = channels.map((inline) => ({ inline }));
    return { reply: await c.request('claw.initialize', p), status: await c.request('claw.status', {}) };
  } finally {
    await c.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('STARTING refuses a discord channel, naming it; the agent is in ERROR', async () => {
  const { reply, status } = await initializeWith([{ name: 'dc', type: 'discord', transport: 'websocket', auth: { secret_ref: 'T' } }]);
  assert.ok(reply.error, JSON.stringify(reply));
  assert.match(JSON.stringify(reply.error), /channel dc: type discord is not served by this runtime/);
  assert.is(status.result.state, 'ERROR');
});

test('STARTING refuses a telegram channel that claw.runtime.yaml does not bind', async () => {
  const { reply } = await initializeWith([{ name: 'tg', type: 'telegram', transport: 'polling', auth: { secret_ref: 'T' } }]);
  assert.match(JSON.stringify(reply.error), /channel tg: type telegram is served only when bound in claw.runtime.yaml/);
});

test('a cli channel still starts (served by claw chat)', async () => {
  const { reply, status } = await initializeWith([{ name: 'local', type: 'cli', transport: 'stdio', auth: { secret_ref: 'T' } }]);
  assert.ok(reply.result, JSON.stringify(reply));
  assert.is(status.result.state, 'READY');
});

test.run();
