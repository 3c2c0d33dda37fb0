// Output capture with a byte cap (spec §5.8 resource_limits.max_output_bytes). Past the cap the
// stream is still read and discarded, so a chatty child never blocks on a full pipe.
import type { Readable } from 'node:stream';

export interface Capture {
  text(): string;
  truncated(): boolean;
  closed: Promise<void>;
}

/** Keep the first `cap` bytes (stdout: the answer starts at the beginning). */
export function captureHead(stream: Readable, cap: number): Capture {
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  stream.on('data', (c: Buffer) => {
    if (kept >= cap) {
      truncated ||= c.length > 0;
      return;
    }
    const room = cap - kept;
    if (c.length > room) {
      chunks.push(c.subarray(0, room));
      kept = cap;
      truncated = true;
    } else {
      chunks.push(c);
      kept += c.length;
    }
  });
  return { text: () => decode(Buffer.concat(chunks), truncated), truncated: () => truncated, closed: ended(stream) };
}

/** Keep the last `cap` bytes (stderr: the reason for a failure is usually at the end). */
export function captureTail(stream: Readable, cap: number): Capture {
  const chunks: Buffer[] = [];
  let total = 0;
  let dropped = false;
  stream.on('data', (c: Buffer) => {
    chunks.push(c);
    total += c.length;
    // Drop whole chunks that lie entirely before the last `cap` bytes; the rest is cut in text().
    while (chunks.length > 1 && total - chunks[0].length >= cap) {
      total -= chunks.shift()!.length;
      dropped = true;
    }
  });
  const truncated = () => dropped || total > cap;
  const text = () => {
    const b = Buffer.concat(chunks);
    return b.subarray(Math.max(0, b.length - cap)).toString('utf8');
  };
  return { text, truncated, closed: ended(stream) };
}

/** A cut can split a UTF-8 sequence; drop the incomplete tail instead of emitting U+FFFD. */
function decode(b: Buffer, cut: boolean): string {
  if (!cut) return b.toString('utf8');
  let end = b.length;
  let back = 0;
  while (end - back > 0 && back < 4 && (b[end - 1 - back] & 0xc0) === 0x80) back++;
  const lead = b[end - 1 - back];
  if (lead !== undefined && lead >= 0xc0) {
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (back + 1 < need) end = end - 1 - back;
  }
  return b.subarray(0, end).toString('utf8');
}

function ended(stream: Readable): Promise<void> {
  return new Promise((r) => {
    if (stream.destroyed || stream.readableEnded) return r();
    stream.once('close', () => r());
    stream.once('end', () => r());
    stream.once('error', () => r());
  });
}
