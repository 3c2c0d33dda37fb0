// Synchronous writes that are whole or throw, for the files whose records must never be torn or published short
// (the sql.js journal and snapshots, the MQTT request journal, the fs transport's files). write(2) may take part
// of a buffer and return its count without an error on a nearly full filesystem; the rest is written, and a
// write that makes no progress is an error rather than a loop.

/** The calls used here; the durable layers pass their injectable fs (tests simulate ENOSPC and short writes). */
export interface SyncWriteFs {
  openSync(path: string, flags: string): number;
  closeSync(fd: number): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
}

/**
 * Writes all of `buf` at `position`. `progress.n` counts the bytes written so far (also when it throws: a caller
 * that must cut a failed record back knows how far it got).
 */
export function writeFully(fs: Pick<SyncWriteFs, 'writeSync'>, fd: number, buf: Uint8Array, position: number, progress = { n: 0 }): void {
  while (progress.n < buf.length) {
    const w = fs.writeSync(fd, buf, progress.n, buf.length - progress.n, position + progress.n);
    if (!(w > 0)) throw Object.assign(new Error(`write made no progress (${progress.n} of ${buf.length} bytes)`), { code: 'EIO' });
    progress.n += w;
  }
}

/** fsync of a directory, so a rename in it survives power loss; best effort (Windows cannot open a directory; the rename is still atomic). */
export function fsyncDirBestEffort(fs: Pick<SyncWriteFs, 'openSync' | 'fsyncSync' | 'closeSync'>, dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // see above
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
