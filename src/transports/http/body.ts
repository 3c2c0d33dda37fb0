// Reading a request body under the size cap and the request timeout (docs/transports.md, HTTP "Limits").
// An oversize body is read and dropped to its end, then refused, so a client that writes its whole body before
// reading the response (most do) gets the 413 instead of a reset connection. Past the cap plus a bound (the cap
// again, at least 1 MiB; or a declared Content-Length beyond it) it is refused at once and the connection closes.
import type { IncomingMessage } from 'node:http';

export type BodyOutcome = { bytes: Uint8Array } | { oversize: number } | { aborted: true } | { timeout: true };

const discardSlack = (maxBytes: number) => Math.max(maxBytes, 1024 * 1024);

export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number, done: (o: BodyOutcome) => void): void {
  let finished = false;
  const finish = (o: BodyOutcome) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done(o);
  };
  // Node's requestTimeout covers this too; our own timer keeps the bound on runtimes that do not enforce it.
  const timer = setTimeout(() => finish({ timeout: true }), timeoutMs);
  const cut = maxBytes + discardSlack(maxBytes);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cut) {
    finish({ oversize: declared });
    return;
  }
  const parts: Buffer[] = [];
  let size = 0;
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
