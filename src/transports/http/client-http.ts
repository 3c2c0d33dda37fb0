// `claw send http://host:port/ckp <method> [params]` and the contract suite's peer: a TransportClient over one
// keep-alive connection (so one client's requests arrive in the order it sent them, as on every transport).
// URL parameters: `token_ref` (secret_ref of a bearer token, resolved from the environment and
// $CLAW_SECRETS_DIR, runtime profile §7), and for https `ca`, `cert`, `key` (PEM files: a private CA, a client
// certificate). The Claw-Session-Id the agent issues on claw.initialize is sent on later requests.
import type { ClientOptions, RequestOptions, TransportClient } from '../client.ts';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.ts';
import { ClawError } from '../../protocol/errors.ts';
import { httpModule, httpsModule } from '../../node/lazy.ts';
import { parseHttpUrl } from './settings.ts';
import { timerDelay } from '../../protocol/delay.ts';

const DEFAULT_TIMEOUT_MS = 30_000;

export async function connectHttpClient(uri: string, opts: ClientOptions): Promise<TransportClient> {
  const ep = parseHttpUrl(uri);
  const known = new Set(['token_ref', 'ca', 'cert', 'key']);
  for (const k of Object.keys(ep.query)) if (!known.has(k)) throw new ClawError('usage', `unknown http URL parameter "${k}" (known: ${[...known].join(', ')})`);
  // Only the runtime's resolver (runtime profile §7): it honours `secrets.env: false` and registers the value
  // with the log redactor; the host, not this adapter, decides where secrets come from.
  if (ep.query.token_ref && !opts.secrets) throw new ClawError('secret-unresolved', `token_ref "${ep.query.token_ref}" needs the runtime's secret resolver`);
  const token = ep.query.token_ref ? await opts.secrets!.resolve(ep.query.token_ref) : undefined;
  const file = async (name: string) => {
    const p = ep.query[name];
    if (p === undefined) return undefined;
    const path = p.startsWith('/') ? p : `${opts.baseDir.replace(/\/$/, '')}/${p}`;
    try {
      return await (await import('node:fs/promises')).readFile(path, 'utf8');
    } catch (e) {
      throw new ClawError('usage', `cannot read ${name} file ${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  };
  const [ca, cert, key] = [await file('ca'), await file('cert'), await file('key')];
  const mod = ep.tls ? await httpsModule() : await httpModule();
  // One connection for requests (order), another for the event stream.
  const agent = new mod.Agent({ keepAlive: true, maxSockets: 1, ...(ep.tls ? { ca, cert, key } : {}) } as never);
  const streamAgent = new mod.Agent({ keepAlive: false, ...(ep.tls ? { ca, cert, key } : {}) } as never);
  const path = ep.path;
  let session: string | undefined;
  let closed = false;
  const inflight = new Set<import('node:http').ClientRequest>();

  const headers = (extra: Record<string, string> = {}) => ({
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(session ? { 'claw-session-id': session } : {}),
    ...extra,
  });

  const post = (text: string, o: RequestOptions | undefined): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new ClawError('closed', 'client closed'));
      const timeoutMs = o?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const body = Buffer.from(text, 'utf8');
      const req = mod.request(
        { host: ep.host, port: ep.port, path, method: 'POST', agent, headers: headers({ 'content-type': 'application/json', 'content-length': String(body.length) }) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            clearTimeout(timer);
            inflight.delete(req);
            const sid = res.headers['claw-session-id'];
            if (typeof sid === 'string') session = sid;
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (e) => reject(new ClawError('unreachable', `http response failed: ${e.message}`)));
        },
      );
      inflight.add(req);
      const timer = setTimeout(() => {
        req.destroy();
        reject(new ClawError('timeout', `no reply from ${describe()} within ${timeoutMs} ms`));
      }, timerDelay(timeoutMs));
      req.on('error', (e) => {
        clearTimeout(timer);
        inflight.delete(req);
        reject(new ClawError('unreachable', `cannot reach ${describe()}: ${(e as NodeJS.ErrnoException).code ?? e.message}`, { cause: e }));
      });
      req.end(body);
    });
  const describe = () => `${ep.tls ? 'https' : 'http'}://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}${path}`;
  const parseReply = (r: { status: number; body: string }) => {
    if (r.status === 202 || r.body === '') return undefined;
    try {
      return JSON.parse(r.body);
    } catch {
      throw new ClawError('unreachable', `${describe()} answered HTTP ${r.status} without a JSON-RPC body`);
    }
  };

  let streamReq: import('node:http').ClientRequest | undefined;
  const watch = (fn: (m: JsonRpcNotification) => void) => {
    let lastId: string | undefined;
    let delay = 100;
    const connect = () => {
      if (closed) return;
      const req = mod.request(
        { host: ep.host, port: ep.port, path, method: 'GET', agent: streamAgent, headers: headers({ accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) }) },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return;
          }
          delay = 100;
          res.setEncoding('utf8');
          let buf = '';
          res.on('data', (chunk: string) => {
            buf += chunk;
            for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
              const event = buf.slice(0, end);
              buf = buf.slice(end + 2);
              let data = '';
              for (const line of event.split('\n')) {
                if (line.startsWith('id: ')) lastId = line.slice(4);
                else if (line.startsWith('data: ')) data += line.slice(6);
              }
              if (data) {
                try {
                  fn(JSON.parse(data) as JsonRpcNotification);
                } catch {
                  /* not JSON: not a notification */
                }
              }
            }
          });
          res.on('error', () => {});
        },
      );
      streamReq = req;
      req.on('error', () => {});
      // Reconnect with Last-Event-ID when the stream ends (agent restart, slow-reader cut-off).
      req.on('close', () => {
        if (closed) return;
        setTimeout(connect, delay).unref?.();
        delay = Math.min(delay * 2, 5_000);
      });
      req.end();
    };
    connect();
  };

  return {
    async request(message, o) {
      return parseReply(await post(JSON.stringify(message), o));
    },
    async notify(message) {
      await post(JSON.stringify(message), undefined);
    },
    async sendRaw(text, o) {
      const r = await post(text, o);
      return o?.expectReply === false ? undefined : parseReply(r);
    },
    onNotification: watch,
    async close() {
      closed = true;
      streamReq?.destroy();
      for (const r of inflight) r.destroy();
      agent.destroy();
      streamAgent.destroy();
    },
  };
}
