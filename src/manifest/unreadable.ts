// How the loader words a file it could not read, by the reader's error code (src/node/fs-reader.ts): the path
// and the reason, never anything read from the file.
import { MAX_SOURCE_BYTES } from './source.ts';

export function unreadable(code: string | undefined, within: string | undefined): { why: string; rule: string } {
  switch (code) {
    case 'ENOENT':
      return { why: 'does not exist', rule: 'file-not-found' };
    case 'EISDIR':
      return { why: 'is a directory', rule: 'file-not-found' };
    case 'not-regular':
      return { why: 'is not a regular file (a device, FIFO or socket)', rule: 'file-not-regular' };
    case 'too-large':
      return { why: `is larger than ${MAX_SOURCE_BYTES} bytes`, rule: 'file-too-large' };
    case 'outside':
    case 'ELOOP':
      return { why: `resolves (through a symlink) outside ${within}`, rule: 'file-outside' };
    default:
      return { why: `cannot be read (${code ?? 'error'})`, rule: 'file-not-found' };
  }
}
