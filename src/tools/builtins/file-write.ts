// `file-write`: { path: string, content: string, encoding?: "utf8" | "base64", append?: boolean,
// create_dirs?: boolean } → bytes written. Needs a writable scope (spec §5.8 filesystem: `scoped`
// with an `rw` mount, or `full`), checked on the resolved real path; a final symlink is never followed.
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { checkPath } from '../../sandbox/paths.ts';
import { SandboxViolation, textResult } from '../types.ts';
import type { BuiltinDef } from './def.ts';

export const fileWrite: BuiltinDef = {
  name: 'file-write',
  touchesOs: true,
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1 },
      content: { type: 'string' },
      encoding: { enum: ['utf8', 'base64'] },
      append: { type: 'boolean' },
      create_dirs: { type: 'boolean' },
    },
    required: ['path', 'content'],
  },
  async run(args, ctx) {
    if (typeof args.path !== 'string' || args.path === '' || typeof args.content !== 'string') return textResult('file-write needs "path" and "content"', true);
    const checked = await checkPath(args.path, 'write', ctx.sandbox.capabilities?.filesystem, ctx.cwd);
    if (!checked.ok) throw new SandboxViolation('filesystem', checked.reason);
    const data = args.encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
    if (args.create_dirs === true) await mkdir(checked.real.slice(0, checked.real.lastIndexOf('/')) || '/', { recursive: true });
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (args.append === true ? constants.O_APPEND : constants.O_TRUNC);
    let fh;
    try {
      fh = await open(checked.real, flags, 0o644);
    } catch (e) {
      return textResult(`cannot write ${args.path}: ${(e as { code?: string }).code ?? (e as Error).message}`, true);
    }
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    return textResult(`wrote ${data.length} bytes to ${args.path}`);
  },
};
