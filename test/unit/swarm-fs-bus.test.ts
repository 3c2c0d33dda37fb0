// The filesystem bus (docs/swarm.md): presence files in a registry directory, requests through the
// fs transport's inboxes. Real files in a temp directory.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { openFsBus } from '../../src/swarm/fs-bus.ts';
import { BusError } from '../../src/swarm/bus.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { captureLog } from './swarm-fixture.ts';

const clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setInterval: (f: () => void, ms: number) => {
    const t = setInterval(f, ms);
    return { cancel: () => clearInterval(t) };
  },
  setTimeout: (f: () => void, ms: number) => {
    const t = setTimeout(f, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

function pair(c: typeof clock = clock) {
  const clock = c;
  const root = mkdtempSync(join(tmpdir(), 'claw-fsbus-'));
  const log = captureLog([]);
  const a = openFsBus({ root, self: 'a', log, clock, staleAfterMs: 300, pollMs: 50 });
  const b = openFsBus({ root, self: 'b', log, clock, staleAfterMs: 300, pollMs: 50 });
  return { root, a, b, done: async () => (await a.close(), await b.close(), rmSync(root, { recursive: true, force: true })) };
}

test('presence: announced peers seen with role and status, never self; stale → unavailable; close → unavailable', async () => {
  const { a, b, done } = pair();
  await a.announce({ identity: 'a', swarm: 's', role: 'leader', status: 'ready' });
  await b.announce({ identity: 'b', swarm: 's', role: 'worker', status: 'busy' });
  const seen = a.peers('s');
  assert.equal(seen.map(({ seen_at, ...p }) => p), [{ identity: 'b', swarm: 's', role: 'worker', status: 'busy' }]);
  assert.equal(a.peers('other'), []);
  await new Promise((r) => setTimeout(r, 350));
  assert.is(a.peers('s')[0].status, 'unavailable', 'not refreshed within staleAfterMs');
  await b.announce({ identity: 'b', swarm: 's', role: 'worker', status: 'ready' });
  assert.is(a.peers('s')[0].status, 'ready');
  await b.close();
  assert.is(a.peers('s')[0].status, 'unavailable', 'a clean close withdraws');
  await done();
});

test('presence across wall-clock steps: set back a year, a silent peer still goes stale; set forward a day, a live one is not', async () => {
  let offset = 0;
  const { a, b, done } = pair({ ...clock, now: () => Date.now() + offset });
  await b.announce({ identity: 'b', swarm: 's', role: 'worker', status: 'ready' });
  offset += 86_400_000;
  assert.is(a.peers('s')[0].status, 'ready', 'announced a moment ago');
  await b.announce({ identity: 'b', swarm: 's', role: 'worker', status: 'ready' });
  offset -= 366 * 86_400_000;
  await new Promise((r) => setTimeout(r, 350));
  assert.is(a.peers('s')[0].status, 'unavailable', 'not refreshed within staleAfterMs');
  await done();
});

test('a presence naming a dead pid on this host reads unavailable at once; a foreign or malformed file (no numeric updated_at) is ignored', async () => {
  const { root, a, done } = pair();
  await a.announce({ identity: 'a', swarm: 's', role: 'x', status: 'ready' });
  const dir = join(root, 'registry', 's');
  writeFileSync(join(dir, 'dead.json'), JSON.stringify({ identity: 'dead', swarm: 's', role: 'w', status: 'ready', pid: 2 ** 22 + 12345, host: hostname(), updated_at: Date.now() }));
  writeFileSync(join(dir, 'liar.json'), JSON.stringify({ identity: 'someone-else', swarm: 's', role: 'w', status: 'ready', pid: process.pid, host: hostname(), updated_at: Date.now() }));
  writeFileSync(join(dir, 'junk.json'), '{not json');
  writeFileSync(join(dir, 'nostamp.json'), JSON.stringify({ identity: 'nostamp', swarm: 's', role: 'w', status: 'ready', pid: 1, host: 'another-board', updated_at: 'never' }));
  assert.equal(a.peers('s').map((p) => [p.identity, p.status]), [['dead', 'unavailable']]);
  await done();
});

test('a presence stamped a year ahead (written before the clock was set back, by a peer gone since) goes stale after staleAfterMs, not a year', async () => {
  const { root, a, done } = pair();
  await a.announce({ identity: 'a', swarm: 's', role: 'x', status: 'ready' });
  const dir = join(root, 'registry', 's');
  const presence = (updated_at: number) => JSON.stringify({ identity: 'gone', swarm: 's', role: 'w', status: 'ready', pid: 1, host: 'another-board', updated_at });
  const ahead = Date.now() + 365 * 86_400_000;
  writeFileSync(join(dir, 'gone.json'), presence(ahead));
  a.peers('s'); // first seen now
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(a.peers('s').map((p) => [p.identity, p.status]), [['gone', 'unavailable']], 'unchanged for longer than staleAfterMs');
  writeFileSync(join(dir, 'gone.json'), presence(ahead + 1000)); // a live peer (its clock ahead) rewrites it
  assert.equal(a.peers('s').map((p) => [p.identity, p.status]), [['gone', 'ready']]);
  await done();
});

test('request/notify through the peer inbox; remote errors come back as ProtocolError; an unavailable peer gets no file', async () => {
  const { root, a, b, done } = pair();
  const got: any[] = [];
  await b.start(async (m) => {
    got.push(m);
    if (m.method === 'boom') throw new ProtocolError(-32011, 'Policy denied: no');
    return { echo: m.params };
  });
  await a.announce({ identity: 'a', swarm: 's', role: 'x', status: 'ready' });
  await b.announce({ identity: 'b', swarm: 's', role: 'x', status: 'ready' });
  assert.equal(await a.request('b', 'hello', { n: 1 }, 3000), { echo: { n: 1 } });
  try {
    await a.request('b', 'boom', {}, 3000);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, -32011);
  }
  await a.notify('b', 'note', { x: 1 });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(got.map((m) => m.method), ['hello', 'boom', 'note']);
  try {
    await a.request('nobody', 'hello', {}, 300);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, BusError, 'no inbox: unreachable');
  }
  await b.close();
  const before = readdirSync(join(root, 'peers', 'b', 'inbox')).length;
  try {
    await a.request('b', 'hello', {}, 300);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, BusError);
    assert.match((e as Error).message, 'unavailable');
  }
  assert.is(readdirSync(join(root, 'peers', 'b', 'inbox')).length, before, 'nothing left for a restart to run late');
  assert.ok(existsSync(join(root, 'registry', 's', 'b.json')));
  await done();
});

test.run();
