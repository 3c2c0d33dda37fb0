// --listen / transports: → transports (src/transports/listen.ts) and the client table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { checkSchemes, listenEntries, openTransports, schemeOf } from '../../src/transports/listen.ts';
import { CLIENT_SCHEMES, LISTEN_SCHEMES } from '../../src/runtime/schemes.ts';
import { connectClient } from '../../src/transports/client.ts';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import { captureLogger, FakeClock } from './helpers/fakes.ts';
import type { Transport } from '../../src/kernel/ports.ts';

test('schemeOf', () => {
  assert.is(schemeOf('fs:/a'), 'fs');
  assert.is(schemeOf('MQTTS://h/x'), 'mqtts');
  assert.is(schemeOf('/plain/path'), undefined);
});

test('configured entries first, then --listen URIs not configured; a configured URI keeps its options', () => {
  const cfg = { transports: [{ listen: 'fs:/a', fs: { watch: false } }] };
  assert.equal(listenEntries(['fs:/b', 'fs:/a'], cfg), [
    { entry: { listen: 'fs:/a', fs: { watch: false } }, fromConfig: true },
    { entry: { listen: 'fs:/b' }, fromConfig: false },
  ]);
  assert.equal(listenEntries([], {}), []);
});

test('an unknown scheme is a usage error naming the known ones', () => {
  try {
    checkSchemes([{ entry: { listen: 'pigeon:/coop' } }], LISTEN_SCHEMES);
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.code, 'usage');
    assert.match(e.message, 'unknown transport scheme');
    assert.match(e.message, 'fs:');
  }
});

test('relative fs: paths: --listen against the working directory, configured ones against the config directory', async () => {
  const base = mkdtempSync(`${tmpdir()}/claw-listen-`);
  const ctx = { log: captureLogger(), clock: new FakeClock(), baseDir: `${base}/cwd`, configDir: `${base}/cfg`, dataDir: `${base}/data` };
  const ts = await openTransports(
    [
      { entry: { listen: 'fs:from-cli' }, fromConfig: false },
      { entry: { listen: 'fs:from-config' }, fromConfig: true },
    ],
    ctx,
    LISTEN_SCHEMES,
  );
  assert.equal(
    ts.map((t) => t.name),
    [`fs:${base}/cwd/from-cli`, `fs:${base}/cfg/from-config`],
  );
  for (const t of ts) t.start(() => {});
  assert.ok(existsSync(`${base}/cwd/from-cli/inbox`) && existsSync(`${base}/cfg/from-config/inbox`));
  for (const t of ts) await t.close();
  rmSync(base, { recursive: true, force: true });
});

test('when one transport cannot be opened, the ones already open are closed', async () => {
  let closed = 0;
  const fake: Transport = { name: 'x', closed: new Promise(() => {}), start() {}, notify() {}, close: async () => void closed++ };
  const table = {
    okx: async () => fake,
    badx: async () => {
      throw new Error('broker refused');
    },
  };
  try {
    await openTransports(
      [
        { entry: { listen: 'okx:1' }, fromConfig: false },
        { entry: { listen: 'badx:2' }, fromConfig: false },
      ],
      { log: captureLogger(), clock: new FakeClock(), baseDir: '/', dataDir: '/d' },
      table,
    );
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.message, 'broker refused');
  }
  assert.is(closed, 1);
});

test('the scheme tables are constants: MQTT is in them from the start, nothing can add to them, and no inherited key is a scheme', () => {
  assert.equal(Object.keys(LISTEN_SCHEMES).filter((k) => k.startsWith('mqtt')), ['mqtt', 'mqtts']);
  assert.equal(Object.keys(CLIENT_SCHEMES).filter((k) => k.startsWith('mqtt')), ['mqtt', 'mqtts']);
  assert.ok(Object.isFrozen(LISTEN_SCHEMES) && Object.isFrozen(CLIENT_SCHEMES));
  assert.throws(() => {
    (LISTEN_SCHEMES as any).pigeon = async () => undefined;
  });
  assert.is(LISTEN_SCHEMES.pigeon, undefined);
  try {
    checkSchemes([{ entry: { listen: 'constructor:/x' } }], LISTEN_SCHEMES);
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.code, 'usage');
  }
});

test('a bad fs: URI is a usage error at open time', async () => {
  try {
    await openTransports([{ entry: { listen: 'fs:/a?nope=1' }, fromConfig: false }], { log: captureLogger(), clock: new FakeClock(), baseDir: '/', dataDir: '/d' }, LISTEN_SCHEMES);
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.code, 'usage');
    assert.match(e.message, 'unknown fs: option nope');
  }
});

test('claw.runtime.yaml transports: entries are validated (listen is a URI, fs options typed, unknown keys refused)', () => {
  assert.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'fs:/x', fs: { watch: false, poll_interval_ms: 100, processed: 'delete' } }] }).success);
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: '/just/a/path' }] }).success);
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'fs:/x', fs: { processed: 'shred' } }] }).success);
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'fs:/x', fs: { poll_ms: 5 } }] }).success);
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'fs:/x', fs: { dedup_retention_ms: 1000 } }] }).success);
});

test('connectClient: unknown scheme is a usage error; fs: with no listener is a transport error', async () => {
  try {
    await connectClient('pigeon:/x', { baseDir: '/' }, CLIENT_SCHEMES);
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.code, 'usage');
  }
  try {
    await connectClient(`fs:${tmpdir()}/claw-nobody-${process.pid}`, { baseDir: '/' }, CLIENT_SCHEMES);
    assert.unreachable();
  } catch (e: any) {
    assert.is(e.code, 'transport');
  }
});

test.run();
