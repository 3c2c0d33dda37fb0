// SHA-256 for the audit chain. node:crypto is available on Node >= 18 and Bun alike; the one-shot
// crypto.hash (Node >= 21.7) skips the Hash object, about 3× faster for a record-sized input.
import * as crypto from 'node:crypto';

const oneShot = (crypto as { hash?: (alg: string, data: string | Uint8Array, enc: 'hex') => string }).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}
