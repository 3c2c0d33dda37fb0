// `file` exporter (§5.11): JSON Lines appended to `path`, one write per batch. The parent directory is
// created on first use; the file is created owner-only (0600) since events name tools and arguments.
// A full disk: the directory is tried again by the next batch (a failed mkdir is not kept), and a batch that was
// only partly appended is cut off again, so no torn line glues onto the next event (every line stays JSON); if
// even the cut fails, the next batch starts on a line of its own.
import { appendFile, mkdir, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Exporter } from '../exporter.ts';

export function fileExporter(path: string): Exporter {
  let ready: Promise<unknown> | undefined;
  let torn = false;
  return {
    type: 'file',
    async export(batch) {
      ready ??= mkdir(dirname(path), { recursive: true }).catch((e) => {
        ready = undefined;
        throw e;
      });
      await ready;
      const before = (await stat(path).catch(() => undefined))?.size ?? 0;
      const text = (torn ? '\n' : '') + batch.map((e) => JSON.stringify(e)).join('\n') + '\n';
      try {
        await appendFile(path, text, { mode: 0o600 });
        torn = false;
      } catch (e) {
        await truncate(path, before).then(
          () => (torn = false),
          () => (torn = true),
        );
        throw e;
      }
    },
  };
}
