// LedgerStore on files: {data_dir}/ledger/{provider}.json = {"day":"YYYY-MM-DD","tokens":N},
// written atomically (tmp + fsync + rename) so a power cut never leaves half a ledger.
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import type { LedgerEntry, LedgerStore } from '../kernel/ledger.ts';

export function createFileLedgerStore(dataDir: string): LedgerStore {
  const dir = `${dataDir}/ledger`;
  const file = (provider: string) => `${dir}/${encodeURIComponent(provider)}.json`;
  return {
    async load(provider) {
      let text: string;
      try {
        text = await readFile(file(provider), 'utf8');
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
      await mkdir(dir, { recursive: true });
      const tmp = `${file(provider)}.${process.pid}.tmp`;
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(JSON.stringify(entry));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file(provider));
    },
  };
}
