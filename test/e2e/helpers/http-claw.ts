// Helpers for the HTTP transport e2e suites: start dist/claw.mjs listening on an ephemeral port (the address is
// read from the `http transport listening` log line) and speak HTTP to it with node:http / node:https.
import * as http from 'node:http';
import * as https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClaw, type ClawRun } from './claw-process.ts';
import { sleep, stderrRecords } from './e2e-util.ts';

export interface HttpClaw {
  c: ClawRun;
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/** `claw run [args] --config <dir>/claw.runtime.yaml` with `config` as the file's text; resolves once listening. */
export async function startHttpClaw(config: string, opts: { args?: string[]; env?: Record<string, string>; files?: Record<string, string>; runtime?: string } = {}): Promise<HttpClaw> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-http-e2e-'));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, 'claw.runtime.yaml'), config);
  // `runtime`: another JavaScript runtime's binary in place of this Node (the shell drops the `node` argument).
  const wrap = opts.runtime ? ['sh', '-c', 'shift; exec "$0" "$@"', opts.runtime] : undefined;
  const c = startClaw(['run', '--config', join(dir, 'claw.runtime.yaml'), ...(opts.args ?? [])], { cwd: dir, env: opts.env, wrap });
  const end = Date.now() + 10_000;
  let url: string | undefined;
  while (!url) {
    const rec = safeRecords(c.stderr()).find((r) => r.msg === 'http transport listening');
    if (rec) url = rec.url;
    else if (c.child.exitCode !== null || Date.now() > end) {
      c.kill();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`claw did not start listening: ${c.stderr().slice(-800)}`);
    } else await sleep(20);
  }
  return {
    c,
    url,
    dir,
    async stop() {
      if (c.child.exitCode === null && c.child.signalCode === null) c.kill();
      await Promise.race([c.exited, sleep(3000)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function safeRecords(text: string): any[] {
  try {
    return stderrRecords(text.slice(0, text.lastIndexOf('\n') + 1));
  } catch {
    return [];
  }
}

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface RequestOpts {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  agent?: http.Agent | false;
  tls?: https.RequestOptions;
  timeoutMs?: number;
}

export function request(url: string, o: RequestOpts = {}): Promise<HttpReply> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port,
        path: o.path ?? u.pathname + u.search,
        method: o.method ?? 'POST',
        headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
        agent: o.agent ?? false,
        ...o.tls,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (ch) => chunks.push(ch));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(o.timeoutMs ?? 10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** POST one JSON-RPC message (or batch) to the CKP endpoint. */
export const rpc = (url: string, msg: unknown, o: RequestOpts = {}) => request(url, { ...o, body: typeof msg === 'string' || Buffer.isBuffer(msg) ? msg : JSON.stringify(msg) });

/** An SSE reader: collects events ({id, data}) until closed. */
export function openStream(url: string, headers: Record<string, string> = {}, tls: https.RequestOptions = {}) {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  const events: { id?: string; data: any }[] = [];
  let status = 0;
  let closeReq = () => {};
  const ready = new Promise<number>((resolve, reject) => {
    const req = mod.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'GET', headers: { accept: 'text/event-stream', ...headers }, agent: false, ...tls }, (res) => {
      status = res.statusCode!;
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (ch: string) => {
        buf += ch;
        for (let i = buf.indexOf('\n\n'); i !== -1; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id: string | undefined;
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) events.push({ id, data: JSON.parse(data) });
        }
      });
      res.on('error', () => {});
      resolve(status);
    });
    req.on('error', reject);
    req.end();
    closeReq = () => req.destroy();
  });
  return { events, ready, close: () => closeReq(), status: () => status };
}
