// `file-read`: { path: string, encoding?: "utf8" | "base64", max_bytes?: integer } → the file's
// content. Confined by the sandbox's filesystem scope (spec §5.8: `..` and symlinks cannot leave it):
// opened through src/sandbox/safe-open.ts, which walks the path through directory descriptors and
// judges the path it really took, so a symlink swapped in mid-call cannot lead out. Regular files only.
// At most `max_bytes`, itself at most the sandbox's max_output_bytes (byte-cap.ts), read until end of
// file: one read(2) of a /proc or /sys file returns one page (/proc/cpuinfo of a 4-core board is more).
import type { FileHandle } from 'node:fs/promises';
import { readCap } from './byte-cap.ts';
import { openInScope } from '../../sandbox/safe-open.ts';
import { SandboxViolation, textResult } from '../types.ts';
import type { BuiltinDef } from './def.ts';

const DEFAULT_MAX = 1024 * 1024;

export const fileRead: BuiltinDef = {
  name: 'file-read',
  touchesOs: true,
  inputSchema: {
    type: 'object',
    properties: { path: { type: 'string', minLength: 1 }, encoding: { enum: ['utf8', 'base64'] }, max_bytes: { type: 'integer', minimum: 1 } },
    required: ['path'],
  },
  async run(args, ctx) {
    if (typeof args.path !== 'string' || args.path === '') return textResult('file-read needs a "path"', true);
    const max = readCap(args.max_bytes, ctx.sandbox, DEFAULT_MAX);
    let opened;
    try {
      opened = await openInScope({ path: args.path, cwd: ctx.cwd, fs: ctx.sandbox.capabilities?.filesystem });
    } catch (e) {
      return textResult(`cannot read ${args.path}: ${(e as { code?: string }).code ?? (e as Error).message}`, true);
    }
    if (!opened.ok) throw new SandboxViolation('filesystem', opened.reason);
    const fh = opened.fh;
    try {
      const buf = await readUpTo(fh, max + 1);
      const bytesRead = buf.length;
      const data = buf.subarray(0, Math.min(bytesRead, max));
      const text = args.encoding === 'base64' ? data.toString('base64') : data.toString('utf8');
      return bytesRead > max ? { content: [{ type: 'text', text }, { type: 'text', text: `[truncated at ${max} bytes]` }] } : textResult(text);
    } finally {
      await fh.close();
    }
  },
};

/** Up to `n` bytes from the start, reading until end of file; the buffer grows with what arrives. */
async function readUpTo(fh: FileHandle, n: number): Promise<Buffer> {
  // st.size is 0 for /proc files and may be stale for a growing file: a hint for the first buffer only.
  const size = (await fh.stat()).size;
  let buf = Buffer.allocUnsafe(Math.min(n, Math.max(size + 1, 64 * 1024)));
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      if (got === n) return buf;
      const bigger = Buffer.allocUnsafe(Math.min(n, buf.length * 2));
      buf.copy(bigger, 0, 0, got);
      buf = bigger;
    }
    const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
    if (bytesRead === 0) return buf.subarray(0, got);
    got += bytesRead;
  }
}
