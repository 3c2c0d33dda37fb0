// Corrupting a snapshot file (format 2: deflated image + 48-byte trailer, src/memory/sqlite/format.ts) so that
// recovery must notice. A changed byte of a deflated body can leave the image as it was — a match distance
// changed inside a run of equal bytes copies the same bytes (test/unit/sqlite-snapshot-flips) — so the byte
// flipped is the first from the middle that does change the image.
import { readFileSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

const TRAILER2 = 48;

export function corruptSnapshot(path: string): void {
  const file = readFileSync(path);
  const body = file.subarray(0, file.length - TRAILER2);
  const image = inflateSync(body);
  const changed = () => {
    try {
      return !inflateSync(body).equals(image);
    } catch {
      return true;
    }
  };
  for (let at = body.length >> 1; at < body.length; at++) {
    body[at] ^= 0xff;
    if (changed()) return writeFileSync(path, file);
    body[at] ^= 0xff;
  }
  throw new Error(`no single byte of ${path} changes its image`);
}
