// LedgerStore on files: {data_dir}/ledger/{provider}.json = {"day":"YYYY-MM-DD","tokens":N},
// written atomically (tmp + fsync + rename) so a power cut never leaves half a ledger.
// `fs.promises` is read when a ledger is first used, not imported: one built-in fewer on the start path.
import { promises as fsp } from 'node:fs';
import type { LedgerEntry, LedgerStore } from '../kernel/ledger.ts';

export function createFileLedgerStore(dataDir: string): LedgerStore {
  const dir = `${dataDir}/ledger`;
  const file = (provider: string) => `${dir}/${encodeURIComponent(provider)}.json`;
  return {
    async load(provider) {
      let text: string;
      try {
        text = await fsp.readFile(file(provider), 'utf8');
      } catch (e) {
        if ((e as { code?: string }).code === 'ENOENT') return undefined;
        throw e;
      }
      const v = JSON.parse(text) as Partial<LedgerEntry>;
      if (typeof v.day !== 'string' || typeof v.tokens !== 'number' || !Number.isFinite(v.tokens)) {
        throw new Error(`ledger file ${file(provider)} is malformed`);
      }
      return { day: v.day, tokens: v.tokens };
    },
    async save(provider, entry) {
      await fsp.mkdir(dir, { recursive: true });
      const tmp = `${file(provider)}.${process.pid}.tmp`;
      const fh = await fsp.open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(JSON.stringify(entry));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, file(provider));
    },
  };
}
