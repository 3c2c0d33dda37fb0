// mqtts through mosquitto with a generated CA: the broker's certificate is verified against `ca` (ca_file), the
// password comes from a secret_ref (resolved by the SecretResolver, never in the URL), a wrong password is refused
// and the secret value appears in no error or log line, and an unknown CA is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { SecretResolver } from '../../src/kernel/secrets.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { createMqttListener } from '../../src/transports/mqtt/listen-mqtt.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { findMosquitto, freePort, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, FakeClock } from '../unit/helpers/fakes.ts';

const SECRET = 'tls-test-pass-9f3e1c';
const ok = findMosquitto() !== undefined && existsSync('/usr/bin/openssl') && findPasswd() !== undefined;
if (!ok) console.log('SKIP mqtt-tls: needs mosquitto, mosquitto_passwd and openssl');

function findPasswd(): string | undefined {
  return ['/usr/bin/mosquitto_passwd', '/usr/local/bin/mosquitto_passwd'].find((p) => existsSync(p));
}

let broker: Mosquitto;
let tlsPort = 0;
let dir = '';
const closers: (() => Promise<void>)[] = [];

test.before(async () => {
  if (!ok) return;
  dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-tls-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=claw test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.pem');
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=other CA', '-keyout', 'other.key', '-out', 'other.pem');
  execFileSync(findPasswd()!, ['-b', '-c', join(dir, 'passwd'), 'claw', SECRET], { stdio: 'ignore' });
  tlsPort = await freePort();
  broker = await startMosquitto({
    anonymous: false,
    extraConfig: [`password_file ${dir}/passwd`, `listener ${tlsPort} 127.0.0.1`, `certfile ${dir}/server.pem`, `keyfile ${dir}/server.key`],
  });
  // The helper waits for the plain listener; give the TLS one a moment as well.
  await new Promise((r) => setTimeout(r, 100));
});
test.after.each(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});
test.after(async () => {
  if (ok) await broker.stop();
});

const when = (c: boolean) => (c ? test : test.skip);
const url = (q: string) => `mqtts://claw@127.0.0.1:${tlsPort}/sec/bot?${q}`;
const resolver = (value: string | undefined, redactor = new Redactor()) => new SecretResolver({ env: { MQTT_PW: value } }, redactor);

when(ok)('mqtts: CA-verified TLS and a password from a secret_ref', async () => {
  const log = captureLogger();
  const t = await createMqttListener({ listen: url(`ca=${dir}/ca.pem&password_ref=MQTT_PW`) }, { log, clock: new FakeClock(), baseDir: dir, dataDir: dir, secrets: resolver(SECRET) });
  closers.push(() => t.close());
  await t.ready(5000);
  let runs = 0;
  t.start((f: InboundFrame) => (runs++, f.reply({ jsonrpc: '2.0', id: JSON.parse((f.payload as { text: string }).text).id, result: 'over tls' })));
  const c = await connectMqttClient(url(`ca=ca.pem&password_ref=MQTT_PW`), { baseDir: dir, secrets: resolver(SECRET) });
  closers.push(() => c.close());
  assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'm' }, { timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: 'over tls' });
  // The listener's reply cache runs on the runtime clock (a method-bearing object, here FakeClock): a retry is
  // answered from it.
  assert.equal(await c.request({ jsonrpc: '2.0', id: 2, method: 'm' }, { timeoutMs: 3000, requestId: 'tls-r' }), { jsonrpc: '2.0', id: 2, result: 'over tls' });
  assert.equal(await c.request({ jsonrpc: '2.0', id: 2, method: 'm' }, { timeoutMs: 3000, requestId: 'tls-r' }), { jsonrpc: '2.0', id: 2, result: 'over tls' });
  assert.is(runs, 2);
  assert.not.match(log.text(), SECRET);
});

when(ok)('a wrong password is refused, and the value is in no error or log line', async () => {
  const log = captureLogger();
  const wrong = 'wrong-pass-77a1b2c3';
  const err = await connectMqttClient(url(`ca=ca.pem&password_ref=MQTT_PW`), { baseDir: dir, secrets: resolver(wrong), log, connectTimeoutMs: 3000 } as never).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, 'connect must fail');
  assert.match(err!.message, /Not authorized|Bad User Name or Password/i);
  assert.not.match(err!.message, wrong);
  assert.not.match(log.text(), wrong);
});

when(ok)('an unresolvable password_ref fails before connecting, naming the ref only', async () => {
  const err = await connectMqttClient(url(`ca=ca.pem&password_ref=MQTT_PW`), { baseDir: dir, secrets: resolver(undefined) }).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.match(err!.message, /secret_ref "MQTT_PW" could not be resolved/);
});

when(ok)('a broker certificate from an unknown CA is refused at once (not after the connect timeout)', async () => {
  const t0 = Date.now();
  const err = await connectMqttClient(url(`ca=other.pem&password_ref=MQTT_PW`), { baseDir: dir, secrets: resolver(SECRET), connectTimeoutMs: 20_000 } as never).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, 'connect must fail');
  assert.match(err!.message, /cannot connect to mqtts:\/\/127\.0\.0\.1/);
  assert.match(err!.message, /certificate/i, 'says why');
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
});

test.run();
