// Pairings on disk, in data_dir (docs/channels.md "Pairing"): the running agent is the only writer of
// `pending.json`; `claw pair` (another process) only creates `paired/{sha256(user)}.json`. One writer
// per file, each write a tmp + rename, so the two processes never lose each other's updates.
import { nodeCrypto } from '../node/lazy.ts';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { writeAtomic } from '../transports/fs/layout.ts';
import type { PairingStorage, PendingCode } from './pairing.ts';

export function pairingDir(dataDir: string, channel: string): string {
  return `${dataDir.replace(/\/+$/, '')}/channels/${encodeURIComponent(channel)}/pairing`;
}

const userFile = (user: string) => `${nodeCrypto().createHash('sha256').update(user).digest('hex')}.json`;

export function filePairingStorage(dir: string): PairingStorage {
  return {
    readPending() {
      try {
        const v = JSON.parse(readFileSync(`${dir}/pending.json`, 'utf8')) as { pending?: PendingCode[] };
        return Array.isArray(v.pending) ? v.pending : [];
      } catch {
        return [];
      }
    },
    writePending(list) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // Not fsynced: this runs on the agent's event loop, and a code lost to a power cut is just issued again.
      writeAtomic(dir, 'pending.json', JSON.stringify({ pending: list }), false);
    },
    isPaired(user) {
      return existsSync(`${dir}/paired/${userFile(user)}`);
    },
    addPaired(user, record) {
      mkdirSync(`${dir}/paired`, { recursive: true, mode: 0o700 });
      writeAtomic(`${dir}/paired`, userFile(user), JSON.stringify({ user, ...record }), true);
    },
  };
}

/** In memory (tests, and the CLI channel when no data_dir is wanted). */
export function memoryPairingStorage(): PairingStorage & { paired: Map<string, unknown> } {
  let pending: PendingCode[] = [];
  const paired = new Map<string, unknown>();
  return {
    paired,
    readPending: () => pending.map((p) => ({ ...p })),
    writePending: (l) => void (pending = l.map((p) => ({ ...p }))),
    isPaired: (u) => paired.has(u),
    addPaired: (u, r) => void paired.set(u, r),
  };
}
