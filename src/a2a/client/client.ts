// An A2A client of our own (docs/a2a.md "Client"): read a remote agent's card, pick its JSON-RPC interface
// (A2A 1.0 preferred, 0.3 as the fallback), send one text message and follow the task to its end — over
// SSE when the card says capabilities.streaming (SendStreamingMessage / message/stream), else by polling
// GetTask / tasks/get with backoff. Aborting (the caller's signal or the deadline) sends CancelTask /
// tasks/cancel for a task still running, and so does a result past its caps (a peer streaming appends
// without end). Every byte goes through the network guard (net.ts).
import { timerDelay } from '../../protocol/delay.ts';
import { deadline } from '../../protocol/deadline.ts';
import { nodeCrypto } from '../../node/lazy.ts';
import { SseEventTooLarge, SseParser } from '../../protocol/sse.ts';
import { A2aClientError, type A2aResultCap } from './errors.ts';
import { parseCard, pickEndpoint, type ClientVersion, type Endpoint, type RemoteCard } from './card.ts';
import type { A2aNet } from './net.ts';
import { METHODS, outcomeText, parseResult, STOP_STATES, userMessage, type RemoteArtifact, type RemoteOutcome, type StreamEvent } from './wire.ts';

export const CARD_PATH = '/.well-known/agent-card.json';
const MAX_CARD_BYTES = 256 * 1024;
const MAX_REPLY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_ARTIFACTS = 100;
const CANCEL_TIMEOUT_MS = 5_000;
export const DEFAULT_SEND_TIMEOUT_MS = 120_000;

/** A card URL as given, or (no `.json` at the end) the well-known card under that base URL. */
export function cardUrlOf(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new A2aClientError('card', `not a URL: ${url.slice(0, 200)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new A2aClientError('card', `an agent card URL is http(s), not ${u.protocol}`);
  if (!u.pathname.endsWith('.json')) u.pathname = u.pathname.replace(/\/+$/, '') + CARD_PATH;
  return u.href;
}

export async function fetchCard(net: A2aNet, cardUrl: string, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<RemoteCard> {
  // A2A-Version 1.0: a server that also speaks 0.3 picks the card's shape by this header (absent means 0.3).
  const r = await net.fetch(cardUrl, { headers: { accept: 'application/json', 'a2a-version': '1.0' }, maxBytes: MAX_CARD_BYTES, timeoutMs: o.timeoutMs ?? 15_000, signal: o.signal });
  if (r.status !== 200) throw new A2aClientError('card', `the agent card at ${cardUrl} answered HTTP ${r.status}`);
  if (r.truncated) throw new A2aClientError('card', `the agent card at ${cardUrl} is larger than ${MAX_CARD_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(r.body);
  } catch {
    throw new A2aClientError('card', `the agent card at ${cardUrl} is not JSON`);
  }
  return parseCard(json, r.finalUrl);
}

export interface A2aClientDeps {
  net: A2aNet;
  /** Bearer token for the agent's endpoint (resolved from a secret_ref); never logged, never in an error. */
  token?: string;
  /** Tests: waits between polls. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Monotonic ms (default performance.now()) for what is left of a send's timeout: with the wall clock, NTP's
   * first step on a board without an RTC cut every later call of a running send to 1 ms.
   */
  monotonic?: () => number;
}

export interface SendOptions {
  /** Continue a conversation the remote agent keeps (A2A contextId). */
  contextId?: string;
  /** Deadline for the whole exchange, following the task included (default 120 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** SSE or polling; default: what the card's capabilities.streaming says. */
  stream?: boolean;
  pollInitialMs?: number;
  pollMaxMs?: number;
  /** What the task's artifacts may hold in all, appends included (default 1 MiB). */
  maxResultBytes?: number;
  /** How many artifacts the task may have (default 100). */
  maxArtifacts?: number;
}

export interface A2aReply extends RemoteOutcome {
  /** The reply as text: the artifacts' text, else the status (or direct) message. */
  text: string;
  agent: string;
  endpoint: Endpoint;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, timerDelay(ms));
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** One remote agent, by its card. */
export class A2aClient {
  readonly endpoint: Endpoint;
  private readonly headers: Record<string, string>;
  private seq = 0;

  constructor(
    readonly card: RemoteCard,
    readonly cardUrl: string,
    private readonly d: A2aClientDeps,
  ) {
    this.endpoint = pickEndpoint(card, cardUrl);
    this.headers = { 'content-type': 'application/json', 'a2a-version': this.endpoint.version };
    if (d.token !== undefined) {
      // The card is public and names the endpoint: credentials meant for the card's origin are not
      // handed to whatever other origin a card names (a hijacked or hostile card would collect them).
      if (new URL(this.endpoint.url).origin !== new URL(cardUrl).origin) {
        throw new A2aClientError('auth', `the agent card at ${cardUrl} names an endpoint on another origin (${new URL(this.endpoint.url).origin}): credentials are not sent there`);
      }
      this.headers.authorization = `Bearer ${d.token}`;
    }
  }

  static async open(cardUrl: string, d: A2aClientDeps, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<A2aClient> {
    return new A2aClient(await fetchCard(d.net, cardUrl, o), cardUrl, d);
  }

  private mono(): number {
    return this.d.monotonic ? this.d.monotonic() : performance.now();
  }

  private get v(): ClientVersion {
    return this.endpoint.version;
  }

  async send(text: string, o: SendOptions = {}): Promise<A2aReply> {
    const timeoutMs = o.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    const endsAt = this.mono() + timeoutMs;
    if (o.signal?.aborted) throw new A2aClientError('aborted', `the message to ${this.card.name} was canceled before it was sent`);
    const x = deadline(o.signal, timeoutMs);
    // The task being followed: what CancelTask names when the caller gives up.
    const live: { taskId?: string; ended: boolean } = { ended: false };
    const call = (method: string, params: unknown) => this.call(method, params, x.signal, Math.max(1, endsAt - this.mono()));
    const capped = (t: RemoteOutcome) => this.capped(t, o.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, o.maxArtifacts ?? DEFAULT_MAX_ARTIFACTS);
    try {
      const message = userMessage(this.v, text, nodeCrypto().randomUUID(), o.contextId);
      let out: RemoteOutcome | undefined;
      if (o.stream ?? this.card.streaming) out = await this.streamed(message, x.signal, endsAt, live, capped);
      if (!out || !STOP_STATES.has(out.state)) out = await this.polled(message, out, x.signal, live, call, o, capped);
      live.ended = true;
      return { ...out, text: outcomeText(out), agent: this.card.name, endpoint: this.endpoint };
    } catch (e) {
      const why = x.why();
      const running = live.taskId !== undefined && !live.ended;
      if (!why) {
        // Past a cap the stream is already closed (streamed's finally); the peer is told to stop too.
        if (e instanceof A2aClientError && e.reason === 'limit' && running) await this.cancel(live.taskId!).catch(() => {});
        throw e;
      }
      if (running) await this.cancel(live.taskId!).catch(() => {});
      const task = running ? ` (task ${live.taskId} canceled)` : '';
      throw why === 'timeout'
        ? new A2aClientError('timeout', `no final answer from ${this.card.name} within ${timeoutMs} ms${task}`)
        : new A2aClientError('aborted', `the message to ${this.card.name} was canceled${task}`);
    } finally {
      x.clearDeadline();
      x.unlink();
    }
  }

  /** CancelTask / tasks/cancel, best effort, on a deadline of its own (the caller's signal is spent). */
  async cancel(taskId: string): Promise<void> {
    await this.call(METHODS[this.v].cancel, { id: taskId }, undefined, CANCEL_TIMEOUT_MS);
  }

  /** The outcome, or the `limit` error when its artifacts passed a cap. */
  private capped(t: RemoteOutcome, maxBytes: number, maxArtifacts: number): RemoteOutcome {
    const over = (cap: A2aResultCap, what: string) =>
      new A2aClientError('limit', `${this.card.name} sent more than ${what} for task ${t.taskId ?? '?'} (${cap}): reading stopped, the task canceled`, { limit: cap });
    if (t.artifacts.length > maxArtifacts) throw over('max_artifacts', `${maxArtifacts} artifacts`);
    let bytes = 0;
    for (const a of t.artifacts) bytes += a.bytes;
    if (bytes > maxBytes) throw over('max_result_bytes', `${maxBytes} bytes of artifacts`);
    return t;
  }

  private async polled(message: unknown, from: RemoteOutcome | undefined, signal: AbortSignal, live: { taskId?: string }, call: Call, o: SendOptions, capped: Capped): Promise<RemoteOutcome> {
    let t = from;
    if (!t) {
      // Answer at once with the task (1.0 returnImmediately, 0.3 blocking: false) and follow it here: a
      // blocking send would hold one HTTP exchange for the whole turn, past any proxy's idle timeout.
      const configuration = this.v === '1.0' ? { returnImmediately: true } : { blocking: false };
      const ev = parseResult(await call(METHODS[this.v].send, { message, configuration }), this.v);
      if (ev?.kind === 'message') return ev.outcome;
      if (ev?.kind !== 'task' || !ev.outcome.taskId) throw this.protocol(`${METHODS[this.v].send} answered neither a task nor a message`);
      t = ev.outcome;
    }
    live.taskId = t.taskId;
    capped(t);
    let wait = o.pollInitialMs ?? 250;
    const max = o.pollMaxMs ?? 5_000;
    while (!STOP_STATES.has(t.state)) {
      await (this.d.sleep ?? sleepFor)(wait, signal);
      if (signal.aborted) throw new Error('aborted');
      wait = Math.min(wait * 2, max);
      const ev = parseResult(await call(METHODS[this.v].get, { id: t.taskId, historyLength: 0 }), this.v);
      if (ev?.kind !== 'task') throw this.protocol(`${METHODS[this.v].get} did not answer a task`);
      t = capped({ ...ev.outcome, taskId: ev.outcome.taskId ?? t.taskId });
    }
    return t;
  }

  /** Undefined when the peer turns out not to stream after all (then the caller polls). */
  private async streamed(message: unknown, signal: AbortSignal, deadline: number, live: { taskId?: string }, capped: Capped): Promise<RemoteOutcome | undefined> {
    const method = METHODS[this.v].stream;
    const r = await this.d.net.request(this.endpoint.url, {
      method: 'POST',
      headers: { ...this.headers, accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.seq, method, params: { message } }),
      timeoutMs: Math.max(1, deadline - this.mono()),
      signal,
    });
    const type = r.headers['content-type'] ?? '';
    if (!type.startsWith('text/event-stream')) {
      // A JSON reply: an error (e.g. -32004 UnsupportedOperation from a peer whose card overstates) → poll.
      const body = await readCapped(r.body, MAX_REPLY_BYTES);
      try {
        parseResult(this.rpcResult(r.status, body, method), this.v);
      } catch (e) {
        if (e instanceof A2aClientError && e.reason === 'rpc' && (e.rpcCode === -32004 || e.rpcCode === -32601)) return undefined;
        throw e;
      }
      throw this.protocol(`${method} answered ${type || 'no content type'}, not an event stream`);
    }
    let t: RemoteOutcome | undefined;
    const parser = new SseParser();
    try {
      for await (const chunk of r.body as AsyncIterable<Uint8Array>) {
        for (const { data } of parser.push(chunk)) {
          const ev = parseResult(this.rpcResult(200, data, method), this.v);
          if (!ev) continue; // an event kind this client does not use
          if (ev.kind === 'message' && !t) return ev.outcome;
          t = apply(t, ev);
          if (t?.taskId) live.taskId = t.taskId;
          if (t) capped(t);
          if (t && (STOP_STATES.has(t.state) || (ev.kind === 'status' && ev.final))) return t;
        }
      }
    } catch (e) {
      throw e instanceof SseEventTooLarge ? this.protocol(`the ${method} stream sent ${e.message}`) : e;
    } finally {
      r.body.destroy();
    }
    // The stream ended before the task did (a proxy, a restart): follow it by polling.
    if (t?.taskId) return t;
    throw this.protocol(`the ${method} stream ended before naming a task`);
  }

  private async call(method: string, params: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<unknown> {
    const r = await this.d.net.fetch(this.endpoint.url, {
      method: 'POST',
      headers: { ...this.headers, accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.seq, method, params }),
      maxBytes: MAX_REPLY_BYTES,
      timeoutMs,
      signal,
    });
    if (r.truncated) throw this.protocol(`the ${method} reply is larger than ${MAX_REPLY_BYTES} bytes`);
    return this.rpcResult(r.status, r.body, method);
  }

  /** A JSON-RPC reply's result, or the typed error it carries. */
  private rpcResult(status: number, body: string, method: string): unknown {
    if (status === 401 || status === 403) throw new A2aClientError('auth', `${this.endpoint.url} refused ${method}: HTTP ${status} (credentials missing or wrong)`);
    let j: any;
    try {
      j = JSON.parse(body);
    } catch {
      throw this.protocol(`${method}: HTTP ${status}, not a JSON-RPC reply`);
    }
    if (j && typeof j === 'object' && j.error && typeof j.error === 'object') {
      const code = typeof j.error.code === 'number' ? j.error.code : undefined;
      const msg = typeof j.error.message === 'string' ? j.error.message.slice(0, 300) : 'no message';
      throw new A2aClientError('rpc', `${this.card.name} answered ${method} with error ${code ?? '?'}: ${msg}`, { rpcCode: code });
    }
    if (!j || typeof j !== 'object' || !('result' in j)) throw this.protocol(`${method}: HTTP ${status}, not a JSON-RPC reply`);
    return j.result;
  }

  private protocol(why: string): A2aClientError {
    return new A2aClientError('protocol', `${this.endpoint.url} (A2A ${this.v}): ${why}`);
  }
}

type Call = (method: string, params: unknown) => Promise<unknown>;
type Capped = (t: RemoteOutcome) => RemoteOutcome;

/** A stream event folded into what is known of the task (artifact updates append or replace by id). */
function apply(t: RemoteOutcome | undefined, ev: StreamEvent): RemoteOutcome | undefined {
  if (ev.kind === 'task') return { ...ev.outcome, artifacts: ev.outcome.artifacts.length > 0 ? ev.outcome.artifacts : (t?.artifacts ?? []) };
  if (ev.kind === 'message') return t;
  const base: RemoteOutcome = t ?? { taskId: ev.taskId, state: 'submitted', artifacts: [] };
  if (ev.kind === 'status') {
    const { message: _old, ...rest } = base;
    return { ...rest, taskId: base.taskId ?? ev.taskId, contextId: base.contextId ?? ev.contextId, state: ev.state, ...(ev.message ? { message: ev.message } : {}) };
  }
  const artifacts: RemoteArtifact[] = [...base.artifacts];
  const i = artifacts.findIndex((a) => a.artifactId === ev.artifact.artifactId);
  if (i < 0) artifacts.push(ev.artifact);
  else artifacts[i] = ev.append ? { ...artifacts[i], text: artifacts[i].text + ev.artifact.text, bytes: artifacts[i].bytes + ev.artifact.bytes } : ev.artifact;
  return { ...base, artifacts };
}

async function readCapped(body: AsyncIterable<unknown> & { destroy(): void }, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of body) {
      const b = c as Buffer;
      size += b.length;
      if (size > max) break;
      chunks.push(b);
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}
