// `file-read`: { path: string, encoding?: "utf8" | "base64", max_bytes?: integer } → the file's
// content. Confined by the sandbox's filesystem scope, checked on the resolved real path (spec §5.8:
// `..` and symlinks cannot leave the scope), opened without following a final symlink.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { checkPath } from '../../sandbox/paths.ts';
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
    const checked = await checkPath(args.path, 'read', ctx.sandbox.capabilities?.filesystem, ctx.cwd);
    if (!checked.ok) throw new SandboxViolation('filesystem', checked.reason);
    const max = typeof args.max_bytes === 'number' ? args.max_bytes : DEFAULT_MAX;
    let fh;
    try {
      fh = await open(checked.real, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      return textResult(`cannot read ${args.path}: ${(e as { code?: string }).code ?? (e as Error).message}`, true);
    }
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
