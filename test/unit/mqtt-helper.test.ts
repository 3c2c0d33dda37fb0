// test/helpers/mosquitto.ts itself: a second start() while the broker runs is refused, so no broker process is
// left running that stop() and the exit hook no longer know about.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConnection } from 'node:net';
import { findMosquitto, startMosquitto } from '../helpers/mosquitto.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP mqtt-helper: mosquitto not found (scripts/test-deps.sh installs it)');

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });

(HAVE ? test : test.skip)('start() on a running broker is an error; stop() then leaves nothing listening; start() again works', async () => {
  const b = await startMosquitto();
  try {
    const again = await b.start().then(
      () => 'started',
      (e: Error) => e.message,
    );
    assert.match(again, /already running/);
    await b.stop();
    assert.is(await listening(b.port), false, 'a broker still listens after stop(): orphaned by the second start()');
    await b.start();
    assert.is(await listening(b.port), true);
  } finally {
    await b.stop();
  }
});

test.run();
