// `file-write`: { path: string, content: string, encoding?: "utf8" | "base64", append?: boolean,
// create_dirs?: boolean } → bytes written. Needs a writable scope (spec §5.8 filesystem: `scoped`
// with an `rw` mount, or `full`). Opened — and missing parents made, one name at a time — through
// src/sandbox/safe-open.ts, so a symlink swapped in mid-call cannot lead a write out. Regular files only.
import { openInScope } from '../../sandbox/safe-open.ts';
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
    const data = args.encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
    const write = { append: args.append === true, createDirs: args.create_dirs === true };
    let opened;
    try {
      opened = await openInScope({ path: args.path, cwd: ctx.cwd, fs: ctx.sandbox.capabilities?.filesystem, write });
    } catch (e) {
      return textResult(`cannot write ${args.path}: ${(e as { code?: string }).code ?? (e as Error).message}`, true);
    }
    if (!opened.ok) throw new SandboxViolation('filesystem', opened.reason);
    try {
      await opened.fh.writeFile(data);
    } finally {
      await opened.fh.close();
    }
    return textResult(`wrote ${data.length} bytes to ${args.path}`);
  },
};
