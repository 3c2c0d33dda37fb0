// AuditFile on the local file system (Node >= 18 and Bun): opened once, O_APPEND, mode 0600 in a
// 0700 directory; the tail is read backwards in chunks, so reopening a large log costs one chunk.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditFile } from './log.ts';

const CHUNK = 64 * 1024;

export function openAuditFile(path: string): AuditFile {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(path, 'a+', 0o600);
  return {
    path,
    tail() {
      const size = fstatSync(fd).size;
      let pos = size;
      let buf = new Uint8Array(0);
      while (pos > 0) {
        const n = Math.min(CHUNK, pos);
        pos -= n;
        const chunk = new Uint8Array(n + buf.length);
        readSync(fd, chunk, 0, n, pos);
        chunk.set(buf, n);
        buf = chunk;
        const lastNl = buf.lastIndexOf(0x0a);
        if (lastNl !== -1 && (lastNl === 0 || buf.lastIndexOf(0x0a, lastNl - 1) !== -1)) break;
      }
      const lastNl = buf.lastIndexOf(0x0a);
      if (lastNl === -1) return { torn: buf, tornAt: pos };
      const prevNl = lastNl === 0 ? -1 : buf.lastIndexOf(0x0a, lastNl - 1);
      return { last: buf.subarray(prevNl + 1, lastNl), torn: buf.subarray(lastNl + 1), tornAt: pos + lastNl + 1 };
    },
    truncate(size) {
      ftruncateSync(fd, size);
    },
    append(line) {
      const bytes = Buffer.from(line, 'utf8');
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    },
    sync() {
      fsyncSync(fd);
    },
    close() {
      closeSync(fd);
    },
    firstLine() {
      const buf = new Uint8Array(Math.min(fstatSync(fd).size, 4 * 1024 * 1024));
      const n = readSync(fd, buf, 0, buf.length, 0);
      const nl = buf.subarray(0, n).indexOf(0x0a);
      return nl === -1 ? undefined : buf.subarray(0, nl);
    },
    size() {
      return fstatSync(fd).size;
    },
  };
}
