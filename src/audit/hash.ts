// SHA-256 for the audit chain. node:crypto is available on Node >= 18 and Bun alike.
import { createHash } from 'node:crypto';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
