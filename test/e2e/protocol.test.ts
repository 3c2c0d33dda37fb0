// JSON-RPC 2.0 over NDJSON stdio (spec §9.1, §9.4): ids, notifications, batches, limits, garbage.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runClaw, type ClawRun } from './helpers/claw-process.ts';
import { NEUTRAL_CWD, fixture, withClaw, initialize, assertError, assertResult, assertNoReplySince, waitAfter, waitCount, sleep, stderrRecords } from './helpers/e2e-util.ts';

const STATUS = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'claw.status' });

/** Write raw text and return the next message received after it. */
async function rawReply(c: ClawRun, text: string): Promise<any> {
  const mark = c.messages.length;
  c.sendRaw(text);
  return waitAfter(c, mark, () => true);
}

// ------------------------------------------------------------------ ids

test('ids: string ids are echoed exactly', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    for (const id of ['req-001', '', ' ', '0', 'null', 'ünïcødé ✓ 🦀', 'x'.repeat(500), 'with "quotes" and \\ backslash\n']) {
      const r = await c.request('claw.status', {}, id);
      assert.is(r.id, id);
      assert.is(r.result.state, 'READY');
    }
  });
});

test('ids: numeric ids (0, negative, float, exponent, large) are echoed exactly', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    for (const id of [0, -1, -42, 1.5, -0.25, 3.14159, 1e21, 2 ** 53 - 1, 7]) {
      const r = await c.request('claw.status', {}, id);
      assert.is(r.id, id, `id ${id}`);
      assert.is(r.result.state, 'READY');
    }
    // Written as `1e3` on the wire: the same JSON number 1000.
    const r = await rawReply(c, '{"jsonrpc":"2.0","id":1e3,"method":"claw.status"}\n');
    assert.is(r.id, 1000);
    assert.is(r.result.state, 'READY');
  });
});

test('ids: a null id is a request and is answered with id null', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const r = await rawReply(c, '{"jsonrpc":"2.0","id":null,"method":"claw.status"}\n');
    assert.is(r.id, null);
    assert.is(r.result?.state, 'READY', JSON.stringify(r));
    const e = await rawReply(c, '{"jsonrpc":"2.0","id":null,"method":"claw.bogus"}\n');
    assertError(e, null, -32601);
  });
});

test('ids: an id that is an object, array or boolean is an invalid request answered with id null', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    for (const id of [{ a: 1 }, [1], true, false]) {
      const r = await rawReply(c, `${JSON.stringify(STATUS(id))}\n`);
      assertError(r, null, -32600);
    }
  });
});

// ------------------------------------------------------------------ notifications

test('notifications are never answered: known, unknown, wrong state, bad params', async () => {
  await withClaw(['run'], async (c) => {
    // Before initialize: a status notification (wrong state) and an unknown one.
    let mark = c.messages.length;
    c.send({ jsonrpc: '2.0', method: 'claw.status' });
    c.send({ jsonrpc: '2.0', method: 'claw.no.such.thing', params: { a: 1 } });
    c.send({ jsonrpc: '2.0', method: 'claw.initialized' });
    await sleep(150);
    assert.equal(c.messages.slice(mark), [], 'notification answered before initialize');

    await initialize(c);
    mark = c.messages.length;
    c.send({ jsonrpc: '2.0', method: 'claw.status' });
    c.send({ jsonrpc: '2.0', method: 'claw.status', params: {} });
    c.send({ jsonrpc: '2.0', method: 'claw.initialized' });
    c.send({ jsonrpc: '2.0', method: 'claw.nonexistent.method', params: [] });
    c.send({ jsonrpc: '2.0', method: 'claw.tool.call', params: { name: 'x' } });
    c.send({ jsonrpc: '2.0', method: 'claw.initialize', params: { protocolVersion: 'nope' } });
    c.send({ jsonrpc: '2.0', method: 'rpc.discover' });
    const s = await assertNoReplySince(c, mark);
    assert.is(s.result.state, 'READY');
  });
});

// ------------------------------------------------------------------ batches

test('batch: mixed requests and notifications → one array with only the requests\' replies', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.send([
      { jsonrpc: '2.0', id: 'a', method: 'claw.status', params: {} },
      { jsonrpc: '2.0', method: 'claw.initialized' },
      { jsonrpc: '2.0', id: 7, method: 'claw.nonexistent.method' },
      { jsonrpc: '2.0', method: 'claw.bogus.notification' },
      { jsonrpc: '2.0', id: 0, method: 'claw.status' },
      { jsonrpc: '2.0', id: 'bad', params: {} },
    ]);
    const reply = await waitAfter(c, mark, () => true);
    assert.ok(Array.isArray(reply), `a batch must be answered with an array: ${JSON.stringify(reply)}`);
    assert.is(reply.length, 4);
    const byId = new Map(reply.map((r: any) => [r.id, r]));
    assert.equal([...byId.keys()].sort(), [0, 7, 'a', 'bad'].sort());
    assert.is((byId.get('a') as any).result.state, 'READY');
    assert.is((byId.get(0) as any).result.state, 'READY');
    assertError(byId.get(7), 7, -32601);
    assertError(byId.get('bad'), 'bad', -32600);
    await sleep(100);
    assert.is(c.messages.length, mark + 1, 'exactly one reply line for the batch');
  });
});

test('batch: a batch of notifications only gets no reply at all', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.send([
      { jsonrpc: '2.0', method: 'claw.initialized' },
      { jsonrpc: '2.0', method: 'claw.status' },
      { jsonrpc: '2.0', method: 'claw.unknown' },
    ]);
    await assertNoReplySince(c, mark);
  });
});

test('batch: an empty array is one invalid request (a single object, id null)', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const r = await rawReply(c, '[]\n');
    assert.not.ok(Array.isArray(r), 'empty batch must be answered with a single object');
    assertError(r, null, -32600);
    const r2 = await rawReply(c, '  [ ]  \n');
    assertError(r2, null, -32600);
  });
});

test('batch: [1,2] → an array of two -32600 with id null; ["x"] → one', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const r = await rawReply(c, '[1,2]\n');
    assert.ok(Array.isArray(r), JSON.stringify(r));
    assert.is(r.length, 2);
    for (const x of r) assertError(x, null, -32600);
    const r2 = await rawReply(c, '["x"]\n');
    assert.ok(Array.isArray(r2) && r2.length === 1, JSON.stringify(r2));
    assertError(r2[0], null, -32600);
    const r3 = await rawReply(c, '[{"jsonrpc":"2.0","id":5,"method":"claw.status"},[],null]\n');
    assert.ok(Array.isArray(r3) && r3.length === 3, JSON.stringify(r3));
    assert.is(r3[0].id, 5);
    assert.is(r3[0].result.state, 'READY');
    assertError(r3[1], null, -32600);
    assertError(r3[2], null, -32600);
  });
});

test('batch: before initialize, each request is refused with -32600 and data.state INIT', async () => {
  await withClaw(['run'], async (c) => {
    const r = await rawReply(c, `${JSON.stringify([STATUS(1), { jsonrpc: '2.0', id: 2, method: 'claw.shutdown' }])}\n`);
    assert.ok(Array.isArray(r) && r.length === 2, JSON.stringify(r));
    const byId = new Map(r.map((x: any) => [x.id, x]));
    assertError(byId.get(1), 1, -32600, { state: 'INIT' });
    assertError(byId.get(2), 2, -32600, { state: 'INIT' });
  });
});

// ------------------------------------------------------------------ limits

test('depth bomb: 10,000 nested arrays in params → -32600 with the request id; the agent keeps serving', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const n = 10_000;
    const r = await rawReply(c, `{"jsonrpc":"2.0","id":77,"method":"claw.status","params":${'['.repeat(n)}${']'.repeat(n)}}\n`);
    assertError(r, 77, -32600);
    // Same with nested objects, and a string id.
    const r2 = await rawReply(c, `{"jsonrpc":"2.0","id":"deep","method":"claw.status","params":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}\n`);
    assertError(r2, 'deep', -32600);
    // A bare bomb (no envelope): id null.
    const r3 = await rawReply(c, `${'['.repeat(n)}${']'.repeat(n)}\n`);
    assertError(r3, null, -32600);
    // One million levels in one frame (2 MB, under the 4 MiB default frame cap): past 16,384 levels the frame is
    // refused unparsed (parsing it would hold the event loop ~1.4 s), so its id is not read: null.
    const m = 1_000_000;
    const r4 = await rawReply(c, `{"jsonrpc":"2.0","id":78,"method":"claw.status","params":${'['.repeat(m)}${']'.repeat(m)}}\n`);
    assertError(r4, null, -32600);
    assert.is((await c.request('claw.status', {}, 79)).result.state, 'READY');
  });
});

test('depth: limits.max_depth from the runtime config bounds nesting exactly', async () => {
  await withClaw(['run', '--config', fixture('config', 'depth-8.yaml')], async (c) => {
    await initialize(c); // the TV-L1-04 params nest exactly 8 levels (…providers[0].inline.auth)
    // The envelope is level 1, params level 2: 7 nested arrays reach depth 8 (allowed), 8 reach 9.
    const ok = await c.request('claw.status', [[[[[[[]]]]]]], 1);
    assert.is(ok.result?.state, 'READY', JSON.stringify(ok));
    const bad = await c.request('claw.status', [[[[[[[[]]]]]]]], 2);
    assertError(bad, 2, -32600);
  });
});

test('oversize frame (limits.max_frame_bytes 1024): 5 KB line → -32600 id null, same connection keeps working', async () => {
  await withClaw(['run', '--config', fixture('config', 'frame-1024.yaml')], async (c) => {
    await initialize(c);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'claw.status', params: { pad: 'x'.repeat(5 * 1024) } });
    const r = await rawReply(c, `${big}\n`);
    assertError(r, null, -32600, { limit: 1024 });
    assert.is((await c.request('claw.status', {}, 6)).result?.state, 'READY');

    // The same, written in small chunks, then a request in the very same write as the newline.
    const mark = c.messages.length;
    for (let i = 0; i < big.length; i += 700) c.sendRaw(big.slice(i, i + 700));
    c.sendRaw(`\n${JSON.stringify(STATUS(8))}\n`);
    await waitCount(c, mark + 2);
    assertError(c.messages[mark], null, -32600, { limit: 1024 });
    assert.is(c.messages[mark + 1].id, 8);
    assert.is(c.messages[mark + 1].result.state, 'READY');
  });
});

test('frame size boundary: exactly max_frame_bytes is accepted, one byte more is refused', async () => {
  await withClaw(['run', '--config', fixture('config', 'frame-1024.yaml')], async (c) => {
    await initialize(c);
    const frame = (id: number, size: number) => {
      const base = JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.status', params: { pad: '' } });
      const s = JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.status', params: { pad: 'p'.repeat(size - Buffer.byteLength(base)) } });
      assert.is(Buffer.byteLength(s), size);
      return s;
    };
    const ok = await rawReply(c, `${frame(10, 1024)}\n`);
    assert.is(ok.id, 10);
    assert.is(ok.result?.state, 'READY', JSON.stringify(ok));
    const bad = await rawReply(c, `${frame(11, 1025)}\n`);
    assertError(bad, null, -32600, { limit: 1024 });
    // Multi-byte characters count as bytes: 400 × "é" is 800 bytes of params.
    const multi = JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'claw.status', params: { pad: 'é'.repeat(600) } });
    assert.ok(multi.length < 1024 && Buffer.byteLength(multi) > 1024);
    assertError(await rawReply(c, `${multi}\n`), null, -32600, { limit: 1024 });
  });
});

// ------------------------------------------------------------------ garbage

/** Deterministic pseudo-random bytes, never a newline. */
function randomBytes(seed: number, n: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    let b = x & 0xff;
    if (b === 0x0a) b = 0x0b;
    out[i] = b;
  }
  return out;
}

test('garbage: every undecodable or unparsable line gets -32700 id null, and the process keeps serving', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const lines: Buffer[] = [
      Buffer.from([0xff, 0xfe, 0xfd]), // never valid UTF-8
      Buffer.from([0x00]), // NUL
      Buffer.from('}'), // a lone brace
      Buffer.from([0xc3]), // truncated 2-byte sequence
      Buffer.from([0xc0, 0xaf]), // overlong encoding
      Buffer.from([0xed, 0xa0, 0x80]), // UTF-16 surrogate encoded as UTF-8
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"claw.st'), Buffer.from([0xff]), Buffer.from('atus"}')]), // invalid byte inside
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"claw.status"}}'), // trailing garbage
      Buffer.from("{'jsonrpc':'2.0'}"),
      Buffer.from('undefined'),
      Buffer.from('\u0000{"jsonrpc":"2.0","id":1,"method":"claw.status"}'),
      Buffer.concat([Buffer.from([0x00]), randomBytes(1, 300)]),
      Buffer.concat([Buffer.from([0xff]), randomBytes(2, 2000)]),
      Buffer.concat([Buffer.from('#'), randomBytes(3, 64)]),
    ];
    const mark = c.messages.length;
    c.child.stdin.write(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    await waitCount(c, mark + lines.length);
    const replies = c.messages.slice(mark);
    assert.is(replies.length, lines.length);
    for (const r of replies) assertError(r, null, -32700);
    // One line at a time, interleaved with requests, the same holds.
    for (const [i, l] of lines.entries()) {
      const m = c.messages.length;
      c.child.stdin.write(Buffer.concat([l, Buffer.from('\n')]));
      assertError(await waitAfter(c, m, () => true), null, -32700);
      assert.is((await c.request('claw.status', {}, `after-${i}`)).result.state, 'READY');
    }
    await sleep(50);
    assert.is(c.child.exitCode, null, 'process died on garbage');
  });
});

test('garbage: blank lines and CRLF line endings are tolerated (no reply for blank lines)', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.sendRaw('\n\n   \n\t\n');
    c.sendRaw(`${JSON.stringify(STATUS('crlf'))}\r\n`);
    const r = await waitAfter(c, mark, () => true);
    assert.is(r.id, 'crlf');
    assert.is(r.result.state, 'READY');
    await sleep(100);
    assert.is(c.messages.length, mark + 1);
  });
});

test('a last line without a newline before EOF is still a frame and is answered before exit', async () => {
  const r = await runClaw(['run'], { cwd: NEUTRAL_CWD, input: JSON.stringify(STATUS('eof')) });
  assert.is(r.code, 0);
  const out = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.is(out.length, 1, r.stdout);
  assertError(out[0], 'eof', -32600, { state: 'INIT' });
});

test('garbage: valid JSON that is not an object (number, string, null, true) → -32600 id null', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    for (const text of ['5', '"claw.status"', 'null', 'true']) assertError(await rawReply(c, `${text}\n`), null, -32600);
  });
});

// ------------------------------------------------------------------ envelopes

test('invalid envelopes → -32600 with the id echoed', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const cases: [unknown, string | number][] = [
      [{ jsonrpc: '1.0', id: 'v1', method: 'claw.status' }, 'v1'],
      [{ jsonrpc: 2.0, id: 'num', method: 'claw.status' }, 'num'],
      [{ id: 'nover', method: 'claw.status' }, 'nover'],
      [{ jsonrpc: '2.0', id: 11, method: 5 }, 11],
      [{ jsonrpc: '2.0', id: 12, method: null }, 12],
      [{ jsonrpc: '2.0', id: 13, method: ['claw.status'] }, 13],
      [{ jsonrpc: '2.0', id: 14, method: '' }, 14],
      [{ jsonrpc: '2.0', id: 15, method: 'claw.status', params: 'x' }, 15],
      [{ jsonrpc: '2.0', id: 16, method: 'claw.status', params: 42 }, 16],
      [{ jsonrpc: '2.0', id: 17, method: 'claw.status', params: null }, 17],
      [{ jsonrpc: '2.0', id: 18, method: 'claw.status', result: 1 }, 18],
    ];
    for (const [msg, id] of cases) {
      const r = await rawReply(c, `${JSON.stringify(msg)}\n`);
      assertError(r, id, -32600);
    }
    assert.is((await c.request('claw.status', {}, 'still')).result.state, 'READY');
  });
});

test('responses from the peer (result/error with an id) are not answered', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const mark = c.messages.length;
    c.send({ jsonrpc: '2.0', id: 900, result: { ok: true } });
    c.send({ jsonrpc: '2.0', id: 901, error: { code: -32000, message: 'x' } });
    await assertNoReplySince(c, mark);
  });
});

test('invalid params for Level 1 methods → -32602 with the id', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    const r = await c.request('claw.shutdown', { timeout_ms: -5 }, 'sd');
    assertError(r, 'sd', -32602);
    assert.ok(r.error.data.issues.some((i: any) => i.path === 'timeout_ms'), JSON.stringify(r));
    assertError(await c.request('claw.shutdown', { timeout_ms: 1.5 }, 'sd2'), 'sd2', -32602);
    assertError(await c.request('claw.shutdown', { reason: 7 }, 'sd3'), 'sd3', -32602);
    // Nothing was shut down.
    assert.is((await c.request('claw.status', {}, 'st2')).result.state, 'READY');
  });
});

// ------------------------------------------------------------------ streams

test('stdout carries protocol messages only and stderr is JSON lines with level and msg, through a full session', async () => {
  await withClaw(['run', '--log-level', 'debug'], async (c) => {
    c.sendRaw('garbage\n[]\n');
    await initialize(c);
    c.send({ jsonrpc: '2.0', method: 'claw.initialized' });
    await c.request('claw.status', {}, 1);
    await c.request('claw.bogus', {}, 2);
    await c.request('claw.shutdown', { reason: 'done' }, 3);
    assert.is(await c.end(), 0);
    assert.equal(c.garbage, []);
    const recs = stderrRecords(c.stderr());
    assert.ok(recs.length >= 5, c.stderr());
    for (const r of recs) assert.match(r.ts, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(recs.some((r) => r.level === 'debug'), 'debug level did not apply');
  });
});

test.run();
