// `file` exporter (§5.11): JSON Lines appended to `path`, one write per batch. The parent directory is
// created on first use; the file is created owner-only (0600) since events name tools and arguments.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Exporter } from '../exporter.ts';

export function fileExporter(path: string): Exporter {
  let ready: Promise<unknown> | undefined;
  return {
    type: 'file',
    async export(batch) {
      ready ??= mkdir(dirname(path), { recursive: true });
      await ready;
      await appendFile(path, batch.map((e) => JSON.stringify(e)).join('\n') + '\n', { mode: 0o600 });
    },
  };
}
