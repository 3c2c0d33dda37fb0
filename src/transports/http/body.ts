// Reading a request body under the size cap, the request timeout and a rate floor (docs/transports.md, HTTP
// "Limits"). An oversize body is read and dropped to its end, then refused, so a client that writes its whole body
// before reading the response (most do) gets the 413 instead of a reset connection. Past the cap plus a bound (the
// cap again, at least 1 MiB; or a declared Content-Length beyond it) it is refused at once and the connection closes.
// A request answered before its body was read (a refusal) has the rest drained under that same bound.
import type { IncomingMessage } from 'node:http';

export type BodyOutcome = { bytes: Uint8Array } | { oversize: number } | { aborted: true } | { timeout: true };

const discardSlack = (maxBytes: number) => Math.max(maxBytes, 1024 * 1024);
/**
 * After the first third of the timeout a body must have come at this average rate: a client dripping a byte at a
 * time (an authenticated one: the body is read after the credentials) gives up its connection then, not at the
 * timeout. Far below what a body at the size cap needs to arrive within the timeout (4 MiB in 30 s: 140 KB/s).
 */
export const MIN_BODY_BYTES_PER_S = 1024;

/** The unread rest of a request answered early: dropped up to the bound readBody keeps, else the connection goes. */
export function drainRest(req: IncomingMessage, maxBytes: number): void {
  let left = maxBytes + discardSlack(maxBytes);
  if (Number(req.headers['content-length']) > left) return void req.socket.destroy();
  req.on('data', (c: Buffer) => {
    if ((left -= c.length) < 0) req.socket.destroy();
  });
}

export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number, done: (o: BodyOutcome) => void): void {
  let finished = false;
  const parts: Buffer[] = [];
  let size = 0;
  const finish = (o: BodyOutcome) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done(o);
  };
  // Node's requestTimeout covers the timeout too; our own timer keeps the bound on runtimes that do not enforce it.
  // Due at the timeout, or before once the bytes so far fall below the floor: a third of it, plus their worth at the floor.
  const start = performance.now();
  const check = (): void => {
    const wait = Math.min(timeoutMs, timeoutMs / 3 + (size * 1000) / MIN_BODY_BYTES_PER_S) - (performance.now() - start);
    if (wait > 0) timer = setTimeout(check, wait);
    else finish({ timeout: true });
  };
  let timer = setTimeout(check, timeoutMs / 3);
  const cut = maxBytes + discardSlack(maxBytes);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cut) {
    finish({ oversize: declared });
    return;
  }
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      parts.length = 0;
      if (size > cut) finish({ oversize: size });
      return;
    }
    parts.push(chunk);
  });
  req.on('end', () => finish(size > maxBytes ? { oversize: size } : { bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts, size) }));
  req.on('error', () => finish({ aborted: true }));
  req.on('close', () => {
    if (!req.complete) finish({ aborted: true });
  });
}
