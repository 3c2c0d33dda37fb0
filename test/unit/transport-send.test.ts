// `claw send` (src/cli/send.ts) through main(), against an in-process fs transport answered by an echo.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { main } from '../../src/cli/main.ts';
import type { CliEnv } from '../../src/cli/env.ts';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { resolveFsOptions } from '../../src/transports/fs/options.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { captureLogger, FakeClock } from './helpers/fakes.ts';
import { echo } from './transport-contract.ts';
import { systemClock } from '../../src/node/clock.ts';

function env(argv: string[], cwd = '/'): CliEnv & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    argv,
    cwd,
    env: {},
    stdin: { on: () => undefined },
    stdout: { write: (s: string) => (out += s), on: () => undefined },
    stderr: { write: (s: string) => (err += s) },
    reader: { read: async () => new Uint8Array() } as any,
    clock: new FakeClock(),
    readText: async () => '',
    onSignal: () => {},
    version: '0',
    out: () => out,
    err: () => err,
  };
}

async function withAgent(fn: (dir: string, frames: InboundFrame[]) => Promise<void>) {
  const dir = mkdtempSync(`${tmpdir()}/claw-send-`);
  const frames: InboundFrame[] = [];
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20 }), log: captureLogger() });
  t.start((f) => {
    frames.push(f);
    const text = 'text' in f.payload ? f.payload.text : '';
    if (text.includes('"fail"')) f.reply({ jsonrpc: '2.0', id: JSON.parse(text).id, error: { code: -32601, message: 'Method not found' } });
    else echo(f);
  });
  try {
    await fn(dir, frames);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a result prints one JSON line and exits 0; the JSON-RPC id defaults to the request_id', async () => {
  await withAgent(async (dir) => {
    const e = env(['send', `fs:${dir}`, 'claw.status', '{"a":1}', '--request-id', 'rq-1']);
    assert.is(await main(e), 0);
    assert.equal(JSON.parse(e.out()), { jsonrpc: '2.0', id: 'rq-1', result: { method: 'claw.status', params: { a: 1 } } });
    assert.ok(e.out().endsWith('}\n') && e.out().split('\n').length === 2);
  });
});

test('the wall clock stepping a day forward while connecting does not time the request out (the --timeout is monotonic)', async () => {
  await withAgent(async (dir) => {
    const e = env(['send', `fs:${dir}`, 'claw.status', '--timeout', '5000']);
    const c = e.clock as FakeClock;
    // Every read of the wall clock is a day after the one before: a board's first NTP sync, seen mid-command.
    c.now = () => (c.wall += 86_400_000);
    assert.is(await main(e), 0, e.err());
  });
});

test('--id sets the JSON-RPC id (digits become a number); an error reply exits 1', async () => {
  await withAgent(async (dir) => {
    const e = env(['send', `fs:${dir}`, 'fail', '--id', '42']);
    assert.is(await main(e), 1);
    assert.equal(JSON.parse(e.out()), { jsonrpc: '2.0', id: 42, error: { code: -32601, message: 'Method not found' } });
  });
});

test('--reply-to reads the reply from outbox/NAME/ and sends reply_to; --notify waits for nothing', async () => {
  await withAgent(async (dir, frames) => {
    const e = env(['send', `fs:${dir}`, 'm', '--reply-to', 'me']);
    assert.is(await main(e), 0);
    assert.is(JSON.parse((frames[0].payload as { text: string }).text).reply_to, 'me');
    assert.equal(readdirSync(`${dir}/outbox/me`), [], 'the reply read is removed');
    assert.equal(readdirSync(`${dir}/outbox`), ['me'], 'nothing was answered into outbox/ itself');
    const n = env(['send', `fs:${dir}`, 'claw.initialized', '--notify']);
    assert.is(await main(n), 0);
    assert.is(n.out(), '');
  });
});

test('exit codes: 2 for usage mistakes, 3 for no reply in time, 4 when nothing listens', async () => {
  for (const argv of [['send'], ['send', 'fs:/x'], ['send', 'fs:/x', 'm', '[1'], ['send', 'fs:/x', 'm', '"str"'], ['send', 'fs:/x', 'm', '--timeout', '0'], ['send', 'fs:/x', 'm', '--request-id', '../x'], ['send', 'nope:/x', 'm']]) {
    const e = env(argv);
    assert.is(await main(e), 2, argv.join(' '));
  }
  const gone = env(['send', `fs:${tmpdir()}/claw-nobody-${process.pid}`, 'm']);
  assert.is(await main(gone), 4);
  assert.match(gone.err(), 'no agent listens');
  const dir = mkdtempSync(`${tmpdir()}/claw-send-`);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(`${dir}/inbox`);
  const slow = env(['send', `fs:${dir}?poll_interval_ms=10`, 'm', '--timeout', '100']);
  assert.is(await main(slow), 3);
  assert.match(slow.err(), 'within 100 ms');
  rmSync(dir, { recursive: true, force: true });
});

test.run();
