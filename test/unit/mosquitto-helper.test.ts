// The test broker helper (test/helpers/mosquitto.ts) is shared by every MQTT test in one uvu process: its exit
// clean-up is one process listener for all brokers, not one per broker (Node warns past ten).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findMosquitto, startMosquitto } from '../helpers/mosquitto.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP mosquitto-helper: mosquitto not found (scripts/test-deps.sh installs it)');

test('brokers started one after another add at most one exit listener between them', async () => {
  if (!HAVE) return;
  const a = await startMosquitto();
  const before = process.listenerCount('exit');
  const b = await startMosquitto();
  const c = await startMosquitto();
  try {
    assert.is(process.listenerCount('exit'), before);
  } finally {
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  }
});

test.run();
