// `--listen fs:/dir` / `transports: [{ listen: fs:/dir, fs: {...} }]` → a filesystem transport.
// Options: defaults, then claw.runtime.yaml's `fs:`, then the URI's query parameters.
import type { Transport } from '../../kernel/ports.ts';
import { ClawError } from '../../protocol/errors.ts';
import type { ListenContext, TransportEntry } from '../listen.ts';
import { parseFsUri, resolveFsOptions } from './options.ts';
import { createFsTransport } from './transport.ts';

export function createFsListener(entry: TransportEntry, ctx: ListenContext): Transport {
  const parsed = parseFsUri(entry.listen, ctx.baseDir);
  if ('error' in parsed) throw new ClawError('usage', parsed.error);
  return createFsTransport({
    dir: parsed.dir,
    clock: ctx.clock,
    options: resolveFsOptions(entry.fs, parsed.options),
    log: ctx.log,
    maxFrameBytes: ctx.maxFrameBytes,
    redact: ctx.secrets ? (text) => ctx.secrets!.redactText(text) : undefined,
  });
}
