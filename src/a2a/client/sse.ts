// Server-Sent Events as A2A's streaming methods send them (one JSON-RPC response per `data:` event,
// WHATWG HTML §9.2 event stream format): only `data` lines matter; comments, `event`, `id` and `retry` are
// ignored. One event is capped: a peer cannot make this process buffer without bound.
import type { Readable } from 'node:stream';

export const MAX_EVENT_BYTES = 1024 * 1024;

/** The data of each event, in order; throws when one event grows past `maxBytes`. */
export async function* sseData(body: Readable, maxBytes = MAX_EVENT_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  let size = 0;
  const line = function* (l: string): Generator<string> {
    if (l === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
      size = 0;
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    size += value.length;
    if (size > maxBytes) throw new Error(`an event of the stream is larger than ${maxBytes} bytes`);
    data.push(value);
  };
  for await (const chunk of body) {
    buf += decoder.decode(chunk as Uint8Array, { stream: true });
    if (buf.length > maxBytes * 2) throw new Error(`an event of the stream is larger than ${maxBytes} bytes`);
    let i: number;
    while ((i = buf.search(/\r\n|\r|\n/)) >= 0) {
      // A lone \r at the end of a chunk may be half of \r\n: wait for the next chunk.
      if (buf[i] === '\r' && i === buf.length - 1) break;
      const l = buf.slice(0, i);
      buf = buf.slice(i + (buf.startsWith('\r\n', i) ? 2 : 1));
      yield* line(l);
    }
  }
  buf += decoder.decode();
  if (buf !== '') yield* line(buf.replace(/\r$/, ''));
  yield* line('');
}
