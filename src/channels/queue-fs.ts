// A queue channel on a filesystem inbox: the fs transport (src/transports/fs, docs/transports.md) as is —
// `{timestamp_ns}-{request_id}.json` files written tmp + rename into inbox/, claimed by rename, replies in
// outbox/ (or outbox/{reply_to}/), archived, deduplicated by request_id across restarts, interrupted ones
// answered and never run twice. Only the frames go to the channel runner instead of the CKP router.
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import { ClawError } from '../protocol/errors.ts';
import { parseFsUri, resolveFsOptions } from '../transports/fs/options.ts';
import { createFsTransport } from '../transports/fs/transport.ts';
import type { ChannelBinding } from './config.ts';

export function openFsQueue(channel: string, b: ChannelBinding, o: { baseDir: string; log: Logger; clock: Pick<Clock, 'now' | 'monotonic'>; maxFrameBytes?: number }): Transport {
  const parsed = parseFsUri(b.listen!, o.baseDir);
  if ('error' in parsed) throw new ClawError('usage', `channel ${channel}: ${parsed.error}`);
  return createFsTransport({
    dir: parsed.dir,
    clock: o.clock,
    options: resolveFsOptions(b.fs, parsed.options),
    log: o.log,
    maxFrameBytes: o.maxFrameBytes,
    name: `channel:${channel}`,
  });
}
