// Reading a request body under the size cap and the request timeout (docs/transports.md, HTTP "Limits").
// Past the cap the body is counted and discarded (so the client, still writing, can read the 413), up to a
// bound after which the connection is cut.
import type { IncomingMessage } from 'node:http';

export type BodyOutcome = { bytes: Uint8Array } | { oversize: number } | { aborted: true } | { timeout: true };

/**
 * Past the cap plus this many bytes (the cap again, at least 1 MiB), the rest of an oversize body is not read: the
 * connection is cut. Up to there it is read and dropped, so a client that writes its whole body before reading
 * the response (most do) sees the 413 rather than a reset connection.
 */
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
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    // Answer at once from the declared length; whatever the client still sends is drained or cut below.
    finish({ oversize: declared });
  }
  const parts: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      parts.length = 0;
      if (!finished) finish({ oversize: size });
      if (size > maxBytes + discardSlack(maxBytes)) req.destroy();
      return;
    }
    if (!finished) parts.push(chunk);
  });
  req.on('end', () => finish({ bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts, size) }));
  req.on('error', () => finish({ aborted: true }));
  req.on('close', () => {
    if (!req.complete) finish({ aborted: true });
  });
}
