// `file-read`: { path: string, encoding?: "utf8" | "base64", max_bytes?: integer } → the file's
// content. Confined by the sandbox's filesystem scope (spec §5.8: `..` and symlinks cannot leave it):
// opened through src/sandbox/safe-open.ts, which walks the path through directory descriptors and
// judges the path it really took, so a symlink swapped in mid-call cannot lead out. Regular files only.
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
    const max = typeof args.max_bytes === 'number' ? args.max_bytes : DEFAULT_MAX;
    let opened;
    try {
      opened = await openInScope({ path: args.path, cwd: ctx.cwd, fs: ctx.sandbox.capabilities?.filesystem });
    } catch (e) {
      return textResult(`cannot read ${args.path}: ${(e as { code?: string }).code ?? (e as Error).message}`, true);
    }
    if (!opened.ok) throw new SandboxViolation('filesystem', opened.reason);
    const fh = opened.fh;
    try {
      const buf = Buffer.alloc(max + 1);
      const { bytesRead } = await fh.read(buf, 0, max + 1, 0);
      const data = buf.subarray(0, Math.min(bytesRead, max));
      const text = args.encoding === 'base64' ? data.toString('base64') : data.toString('utf8');
      return bytesRead > max ? { content: [{ type: 'text', text }, { type: 'text', text: `[truncated at ${max} bytes]` }] } : textResult(text);
    } finally {
      await fh.close();
    }
  },
};
