// The contract every transport keeps (ARCHITECTURE "contract suites"; spec §9.2). A transport is
// driven from both ends: the suite plays the router (a tiny echo handler, so only the transport is
// under test) and a peer plays the sender. Each transport's test file calls transportContract once.
// Promised by every transport: each frame is delivered once, in the order one sender sent it;
// a reply reaches the sender of the frame it answers and no other; a sender's notification is
// delivered and never answered; an agent notification reaches the peer; an oversize frame is
// reported (with the configured limit), answered, and never blocks later frames; after close()
// `closed` resolves, nothing more is delivered, and replies to frames delivered before still arrive.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboundFrame, Transport } from '../../src/kernel/ports.ts';
import { tick, until } from './helpers/fakes.ts';

export interface ContractPeer {
  /** Send frame text; resolves with the parsed reply, or undefined when `expectReply` is false. */
  send(text: string, opts?: { expectReply?: boolean; timeoutMs?: number }): Promise<any>;
  /** Agent-initiated notifications that reached this peer, in order. */
  notifications: any[];
  close(): Promise<void>;
}

export interface ContractSubject {
  transport: Transport;
  /** A sender; with `multiSender`, each call is a distinct sender. */
  peer(): Promise<ContractPeer>;
  /** The transport's frame limit (subjects configure a small one). */
  maxFrameBytes: number;
  /** The other end goes away (stdin EOF); only for transports where that closes them. */
  hangUp?(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface ContractCaps {
  multiSender: boolean;
  /** The subject has hangUp() and it resolves `closed` (stdio: stdin EOF). */
  hangUpCloses?: boolean;
  /** Longest a delivered frame may take to show up (polling transports need more). */
  deliveryMs?: number;
}

interface Harness {
  s: ContractSubject;
  frames: InboundFrame[];
  /** Replies automatically (echo) unless `hold` is set, in which case frames wait in `held`. */
  hold: boolean;
  held: InboundFrame[];
}

/** The suite's stand-in for the router: answers each request with its method and params. */
export function echo(frame: InboundFrame): void {
  const p = frame.payload;
  if ('error' in p) {
    frame.reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: p.error, data: p.error === 'oversize' ? { limit: p.limit } : undefined } });
    return;
  }
  let v: any;
  try {
    v = JSON.parse(p.text);
  } catch {
    frame.reply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return;
  }
  // As the router does (kernel/ports.ts InboundFrame.parsed).
  frame.parsed?.(v);
  const one = (m: any) => ('id' in m ? { jsonrpc: '2.0' as const, id: m.id, result: { method: m.method, params: m.params ?? null } } : undefined);
  if (Array.isArray(v)) {
    const out = v.map(one).filter((x) => x !== undefined);
    if (out.length > 0) frame.reply(out as any);
  } else {
    const r = one(v);
    if (r) frame.reply(r);
  }
}

export function transportContract(name: string, make: () => Promise<ContractSubject>, caps: ContractCaps): void {
  const wait = caps.deliveryMs ?? 2_000;
  const setup = async (): Promise<Harness> => {
    const s = await make();
    const h: Harness = { s, frames: [], hold: false, held: [] };
    s.transport.start((f) => {
      h.frames.push(f);
      if (h.hold) h.held.push(f);
      else echo(f);
    });
    return h;
  };
  const req = (id: string | number, method = 'm', params: unknown = { n: id }) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const run = (title: string, fn: (h: Harness) => Promise<void>) =>
    test(`${name}: ${title}`, async () => {
      const h = await setup();
      try {
        await fn(h);
      } finally {
        await h.s.transport.close();
        await h.s.cleanup();
      }
    });

  run('a request is delivered as sent and answered with its own id', async (h) => {
    const p = await h.s.peer();
    const reply = await p.send(req('a1', 'tool.x', { text: 'é\nline 2 🙂' }), { timeoutMs: wait });
    assert.equal(reply, { jsonrpc: '2.0', id: 'a1', result: { method: 'tool.x', params: { text: 'é\nline 2 🙂' } } });
    assert.is(h.frames.length, 1);
    const text = (h.frames[0].payload as { text: string }).text;
    assert.equal(JSON.parse(text).params, { text: 'é\nline 2 🙂' });
    await p.close();
  });

  run('one sender’s frames are delivered in the order it sent them, each once', async (h) => {
    const p = await h.s.peer();
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => p.send(req(i + 1), { timeoutMs: wait })));
    assert.equal(
      replies.map((r) => r.id),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    assert.equal(
      h.frames.map((f) => JSON.parse((f.payload as { text: string }).text).id),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    await p.close();
  });

  run('a batch is one frame with one reply', async (h) => {
    const p = await h.s.peer();
    const batch = JSON.stringify([JSON.parse(req(1)), { jsonrpc: '2.0', method: 'note' }, JSON.parse(req(2))]);
    const reply = await p.send(batch, { timeoutMs: wait });
    assert.equal(reply, [
      { jsonrpc: '2.0', id: 1, result: { method: 'm', params: { n: 1 } } },
      { jsonrpc: '2.0', id: 2, result: { method: 'm', params: { n: 2 } } },
    ]);
    assert.is(h.frames.length, 1);
    await p.close();
  });

  if (caps.multiSender) {
    run('replies go to the sender of the frame they answer, even with equal JSON-RPC ids', async (h) => {
      const a = await h.s.peer();
      const b = await h.s.peer();
      const [ra, rb] = await Promise.all([a.send(req(1, 'm', { who: 'a' }), { timeoutMs: wait }), b.send(req(1, 'm', { who: 'b' }), { timeoutMs: wait })]);
      assert.equal(ra.result.params, { who: 'a' });
      assert.equal(rb.result.params, { who: 'b' });
      await a.close();
      await b.close();
    });
  }

  run('a sender’s notification is delivered and never answered', async (h) => {
    const p = await h.s.peer();
    await p.send(JSON.stringify({ jsonrpc: '2.0', method: 'claw.initialized' }), { expectReply: false });
    const reply = await p.send(req(7), { timeoutMs: wait });
    assert.is(reply.id, 7);
    assert.is(h.frames.length, 2);
    const { jsonrpc, method, id } = JSON.parse((h.frames[0].payload as { text: string }).text);
    assert.equal({ jsonrpc, method, id }, { jsonrpc: '2.0', method: 'claw.initialized', id: undefined });
    await p.close();
  });

  run('an agent notification reaches the peer', async (h) => {
    const p = await h.s.peer();
    const hb = { jsonrpc: '2.0' as const, method: 'claw.heartbeat', params: { state: 'READY', uptime_ms: 5 } };
    h.s.transport.notify(hb);
    await until(() => p.notifications.length >= 1, wait);
    assert.equal(p.notifications, [hb]);
    await p.close();
  });

  run('an oversize frame is reported with the limit, answered, and does not block later frames', async (h) => {
    const p = await h.s.peer();
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'm', params: { pad: 'x'.repeat(h.s.maxFrameBytes) } });
    const reply = await p.send(big, { timeoutMs: wait });
    assert.equal(reply.error.code, -32600);
    assert.is(reply.id, null);
    const payload = h.frames[0].payload as { error: string; bytes: number; limit: number };
    assert.is(payload.error, 'oversize');
    assert.is(payload.limit, h.s.maxFrameBytes);
    // A transport may add its envelope (fs: reply_to), so the size is the frame's plus a little.
    assert.ok(payload.bytes > h.s.maxFrameBytes && payload.bytes <= big.length + 64, `bytes ${payload.bytes}`);
    const next = await p.send(req('after'), { timeoutMs: wait });
    assert.is(next.id, 'after');
    await p.close();
  });

  run('malformed text is delivered to the router to answer, and later frames still flow', async (h) => {
    const p = await h.s.peer();
    const reply = await p.send('{"jsonrpc":"2.0", nope', { timeoutMs: wait });
    assert.equal(reply, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    assert.equal(h.frames[0].payload, { text: '{"jsonrpc":"2.0", nope' });
    assert.is((await p.send(req(2), { timeoutMs: wait })).id, 2);
    await p.close();
  });

  run('close: closed resolves, nothing more is delivered, replies to earlier frames still arrive', async (h) => {
    const p = await h.s.peer();
    h.hold = true;
    const pendingReply = p.send(req('held'), { timeoutMs: wait });
    await until(() => h.held.length === 1, wait);
    await h.s.transport.close();
    let resolved = false;
    await Promise.race([h.s.transport.closed.then(() => (resolved = true)), tick(1000)]);
    assert.ok(resolved, 'closed resolves after close()');
    echo(h.held[0]);
    assert.is((await pendingReply).id, 'held');
    await p.send(req('late'), { expectReply: false }).catch(() => {});
    await tick(Math.min(wait, 400));
    assert.is(h.frames.length, 1, 'no frame delivered after close');
    await p.close();
  });

  run('a second close is harmless', async (h) => {
    await h.s.transport.close();
    await h.s.transport.close();
    await h.s.transport.closed;
  });

  if (caps.hangUpCloses) {
    run('the peer hanging up closes the transport', async (h) => {
      await h.s.hangUp!();
      let resolved = false;
      await Promise.race([h.s.transport.closed.then(() => (resolved = true)), tick(1000)]);
      assert.ok(resolved);
    });
  }
}
