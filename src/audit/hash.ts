// SHA-256 for the audit chain. node:crypto is available on Node >= 18 and Bun alike; the one-shot
// crypto.hash (Node >= 21.7) skips the Hash object, about 3× faster for a record-sized input.
// Required on first use (src/node/lazy.ts): importing node:crypto costs RSS in every agent.
import { nodeCrypto } from '../node/lazy.ts';

export function sha256Hex(data: string | Uint8Array): string {
  const crypto = nodeCrypto();
  const oneShot = (crypto as { hash?: (alg: string, data: string | Uint8Array, enc: 'hex') => string }).hash;
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}
