// A peer that shares only the IPC directory can fill inbox/ with many large request files; the agent
// claims and holds only max_in_flight of them (and max_in_flight_bytes of their bytes) at once, the
// rest wait in inbox/ (docs/transports.md, "Untrusted peers"): none lost, none run twice, order kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { parseFsUri, resolveFsOptions, type FsTransportOptions } from '../../src/transports/fs/options.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { captureLogger, until } from './helpers/fakes.ts';
import { systemClock } from '../../src/node/clock.ts';

const cleanup: (() => unknown)[] = [];
test.after.each(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const T = String(BigInt(Date.now()) * 1_000_000n).slice(0, 16);

/**
 * `count` request files of about `size` bytes each dropped into inbox/ before the agent starts; the agent
 * answers each a few ms after it arrives. Records what was delivered and not yet answered, at its peak.
 */
async function flood(options: FsTransportOptions, count: number, size: number) {
  const dir = mkdtempSync(`${tmpdir()}/claw-fsflood-`);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(`${dir}/inbox`, { recursive: true });
  const pad = 'x'.repeat(size);
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(3, '0');
    writeFileSync(`${dir}/inbox/${T}${n}-r${n}.json`, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'm', params: { pad } }));
  }
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20, processed: 'delete', ...options }), log: captureLogger(), maxFrameBytes: 1 << 20 });
  cleanup.push(() => t.close());
  const seen = { order: [] as number[], now: 0, bytes: 0, peak: 0, peakBytes: 0 };
  t.start((f: InboundFrame) => {
    const text = (f.payload as { text: string }).text;
    const id = JSON.parse(text).id as number;
    seen.order.push(id);
    seen.now++;
    seen.bytes += text.length;
    seen.peak = Math.max(seen.peak, seen.now);
    seen.peakBytes = Math.max(seen.peakBytes, seen.bytes);
    setTimeout(() => {
      seen.now--;
      seen.bytes -= text.length;
      f.reply({ jsonrpc: '2.0', id, result: 'ok' });
    }, 3);
  });
  await until(() => readdirSync(`${dir}/outbox`).length === count && readdirSync(`${dir}/inbox`).length === 0, 15_000);
  await until(() => readdirSync(`${dir}/.state/processing`).length === 0, 3000);
  const replies = readdirSync(`${dir}/outbox`).map((n) => n.replace(/^\d+-/, '')).sort();
  return { seen, replies, ids: Array.from({ length: count }, (_, i) => i) };
}

test('a flood of request files: at most max_in_flight held at once, each answered once, in name order', async () => {
  const { seen, replies, ids } = await flood({ max_in_flight: 4 }, 60, 32 * 1024);
  assert.ok(seen.peak <= 4, `peak in flight ${seen.peak}`);
  assert.equal(seen.order, ids, 'each delivered once, in name order');
  assert.equal(replies, ids.map((i) => `r${String(i).padStart(3, '0')}.json`), 'each answered once');
});

test('a flood of large files: their bytes in flight stay under max_in_flight_bytes plus one request', async () => {
  const size = 200 * 1024;
  const budget = 500 * 1024;
  const { seen, replies, ids } = await flood({ max_in_flight_bytes: budget }, 40, size);
  assert.ok(seen.peakBytes < budget + size + 1024, `peak bytes in flight ${seen.peakBytes}`);
  assert.ok(seen.peak <= 3, `peak in flight ${seen.peak}`);
  assert.equal(seen.order, ids);
  assert.is(replies.length, 40);
});

test('defaults sized for a 256 MB board; settable in claw.runtime.yaml and as fs: URI parameters', () => {
  const d = resolveFsOptions();
  assert.is(d.max_in_flight, 16);
  assert.is(d.max_in_flight_bytes, 16 * 1024 * 1024);
  assert.equal(parseFsUri('fs:/ipc?max_in_flight=2&max_in_flight_bytes=65536', '/'), { dir: '/ipc', options: { max_in_flight: 2, max_in_flight_bytes: 65536 } });
  assert.ok('error' in parseFsUri('fs:/ipc?max_in_flight=0', '/'));
});

test.run();
