// The composition root (src/runtime/compose.ts): everything a runtime takes from the machine comes from the host it
// is given (secrets from the host's environment, not process.env), composing has no effect, the data_dir rule is
// the one every command shares, and the client schemes are the constant tables.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { composeRuntime } from '../../src/runtime/compose.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import type { RuntimeHost } from '../../src/runtime/host.ts';
import type { Transport } from '../../src/kernel/ports.ts';
import type { SourceReader } from '../../src/manifest/reader.ts';
import { FakeClock } from './helpers/fakes.ts';

const REF = 'CLAW_COMPOSE_TEST_PASSWORD';

function fakeHost(env: Record<string, string | undefined> = {}): RuntimeHost & { reads: string[]; err: string[] } {
  const reads: string[] = [];
  const err: string[] = [];
  const reader: SourceReader = {
    read: async (p) => {
      reads.push(p);
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    },
    list: async () => [],
    exists: () => false,
  } as SourceReader;
  return {
    cwd: '/work/here',
    env,
    clock: new FakeClock(),
    reader,
    readText: async (p) => {
      reads.push(p);
      return '';
    },
    stderr: { write: (s: string) => err.push(s) },
    onSignal() {},
    version: '0.0.0-test',
    reads,
    err,
  };
}

test('secrets come from the host environment, never from process.env', async () => {
  process.env[REF] = 'from-process-env';
  try {
    assert.is(await composeRuntime({ host: fakeHost({ [REF]: 'from-the-host' }), config: {} }).secrets.resolve(REF), 'from-the-host');
    let err: any;
    await composeRuntime({ host: fakeHost({}), config: {} }).secrets.resolve(REF).catch((e) => (err = e));
    assert.is(err?.code, 'secret-unresolved');
    // `secrets.env: false` turns the environment off, the host's included.
    err = undefined;
    await composeRuntime({ host: fakeHost({ [REF]: 'from-the-host' }), config: { secrets: { env: false } } }).secrets.resolve(REF).catch((e) => (err = e));
    assert.is(err?.code, 'secret-unresolved');
  } finally {
    delete process.env[REF];
  }
});

test('the MQTT client resolves a password_ref only through the resolver it is given', async () => {
  process.env[REF] = 'from-process-env';
  try {
    let err: any;
    await connectMqttClient(`mqtt://127.0.0.1:1/sw/agent?password_ref=${REF}`, { baseDir: '/', connectTimeoutMs: 200 }).catch((e) => (err = e));
    assert.is(err?.code, 'secret-unresolved');
  } finally {
    delete process.env[REF];
  }
});

test('composing reads, opens and starts nothing; data_dir: configured, else beside the manifest, else the working directory', () => {
  const host = fakeHost();
  const a = composeRuntime({ host, config: {} });
  assert.is(a.dataDir, '/work/here/.claw-data');
  assert.is(composeRuntime({ host, config: {}, manifestFile: '/agents/a/claw.yaml' }).dataDir, '/agents/a/.claw-data');
  assert.is(composeRuntime({ host, config: { data_dir: '/var/lib/claw' }, manifestFile: '/agents/a/claw.yaml' }).dataDir, '/var/lib/claw');
  assert.equal(host.reads, []);
  assert.equal(host.err, []);
  assert.is(a.worker, undefined, 'no self command, no worker');
  const w = composeRuntime({ host: { ...host, self: { argv0: '/usr/bin/node', args: ['/opt/claw.mjs'] } }, config: {} }).worker;
  assert.equal([w?.argv0, w?.args], ['/usr/bin/node', ['/opt/claw.mjs']]);
});

test('connect: an unknown scheme is a usage error naming the schemes of the constant table, MQTT included', async () => {
  let err: any;
  await composeRuntime({ host: fakeHost(), config: {} })
    .connect('pigeon:/coop')
    .catch((e) => (err = e));
  assert.is(err?.code, 'usage');
  assert.match(err.message, 'fs:, http:, https:, mqtt:, mqtts:');
});

test('start: the runtime serves the transports it is given and closes them at stop', async () => {
  const events: string[] = [];
  const t: Transport = {
    name: 'fake',
    start: () => void events.push('start'),
    notify() {},
    closed: new Promise(() => {}),
    close: async () => void events.push('close'),
  };
  const runtime = composeRuntime({ host: fakeHost(), config: {} }).start({ transports: [t] });
  assert.equal(events, ['start']);
  assert.is(runtime.agent.lifecycle.state, 'INIT');
  await runtime.stop('test');
  assert.equal(events, ['start', 'close']);
});

test.run();
