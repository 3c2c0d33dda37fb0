// stdio runs the transport contract (one sender: the process on the other end of the pipes).
import { test } from 'uvu';
import { PassThrough } from 'node:stream';
import { createStdioTransport } from '../../src/transports/stdio.ts';
import { transportContract, type ContractPeer } from './transport-contract.ts';

transportContract(
  'stdio',
  async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = createStdioTransport({ input: () => input, output: () => output, maxFrameBytes: 1024 });
    // The peer reads stdout line by line; a reply is matched to the frame it answers by id (the
    // only correlation stdio has), an id-less error reply to an id-less frame.
    const lines: any[] = [];
    const waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
    const notifications: any[] = [];
    let buf = '';
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const m = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (!Array.isArray(m) && 'method' in m) {
          notifications.push(m);
          continue;
        }
        const w = waiters.find((x) => x.match(m));
        if (w) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        } else lines.push(m);
      }
    });
    const idOf = (text: string): unknown => {
      try {
        const v = JSON.parse(text);
        return Array.isArray(v) ? v.find((x) => 'id' in x)?.id : v.id ?? null;
      } catch {
        return null;
      }
    };
    const peer: ContractPeer = {
      notifications,
      send(text, o = {}) {
        const id = text.length > 1024 ? null : idOf(text);
        const match = (m: any) => (Array.isArray(m) ? m[0]?.id === id : m.id === id);
        input.write(`${text}\n`);
        if (o.expectReply === false) return Promise.resolve(undefined);
        const already = lines.find(match);
        if (already) {
          lines.splice(lines.indexOf(already), 1);
          return Promise.resolve(already);
        }
        return new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`no reply for id ${String(id)}`)), o.timeoutMs ?? 2000);
          waiters.push({ match, resolve: (m) => (clearTimeout(t), resolve(m)) });
        });
      },
      close: async () => {},
    };
    return {
      transport,
      maxFrameBytes: 1024,
      peer: async () => peer,
      hangUp: async () => {
        input.end();
      },
      cleanup: async () => {},
    };
  },
  { multiSender: false, hangUpCloses: true },
);

test.run();
