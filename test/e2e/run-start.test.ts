// `claw run --start`: the session starts at launch with the launch manifest (a daemon with no operator).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ROOT, initParams, runClaw, startClaw } from './helpers/claw-process.ts';

const MINIMAL = join(ROOT, 'examples', 'minimal', 'claw.yaml');

test('--start: READY without claw.initialize; a second initialize is refused until shutdown, then accepted', async () => {
  const c = startClaw(['run', MINIMAL, '--start']);
  try {
    const st = await c.request('claw.status', {}, 's1');
    assert.is(st.result.state, 'READY', JSON.stringify(st) + c.stderr());
    const again = await c.request('claw.initialize', initParams(), 'i1');
    assert.is(again.error.code, -32600);
    assert.equal(again.error.data, { state: 'READY' });
    assert.ok((await c.request('claw.shutdown', {}, 'd1')).result);
    assert.ok((await c.request('claw.initialize', initParams(), 'i2')).result);
  } finally {
    assert.is(await c.end(), 0);
  }
});

test('--start without a manifest is a usage error', async () => {
  const r = await runClaw(['run', '--start']);
  assert.is(r.code, 2);
  assert.match(r.stderr, '--start needs a manifest');
});

test.run();
