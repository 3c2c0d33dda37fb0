// One HTTP attempt over global fetch (Node >= 18, Bun), bounded twice: an idle limit to the response
// headers and between chunks that advance the answer (re-armed only by those: SSE comments such as
// `: ping` and whitespace are keep-alives), and a deadline on the attempt's whole time, so bytes that keep
// coming (content trickled a byte at a time by a slow proxy) cannot hold a turn open. The caller's AbortSignal is linked in; errors are classified per runtime profile §5. Bodies are
// decoded as strict UTF-8: invalid bytes are a malformed response, not silently replaced (the validator
// must see what the model produced).
import type { Clock } from '../kernel/ports.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { retryAfterMs } from './retry.ts';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** One attempt's limits (deps.ts attemptLimits): claw.runtime.yaml `providers.<provider>`. */
export interface AttemptLimits {
  readonly provider: string;
  /** `timeout_ms`: to response headers, then between chunks. */
  readonly idleMs: number;
  /** `attempt_deadline_ms`: the whole attempt, however the bytes trickle. */
  readonly deadlineMs: number;
}

export interface Attempt {
  readonly signal: AbortSignal;
  readonly limits: AttemptLimits;
  /** Re-arm the idle limit: progress was made. The deadline is never re-armed. */
  touch(): void;
  done(): void;
  /** Which limit ended the attempt, if one did. */
  readonly timedOut: 'idle' | 'deadline' | undefined;
}

export function startAttempt(caller: AbortSignal, limits: AttemptLimits, clock: Clock): Attempt {
  const ctl = new AbortController();
  let timedOut: 'idle' | 'deadline' | undefined;
  let idle: { cancel(): void } | undefined;
  const expire = (which: 'idle' | 'deadline') => {
    if (timedOut || ctl.signal.aborted) return;
    timedOut = which;
    ctl.abort(new Error(`provider attempt timed out (${which})`));
  };
  const onAbort = () => ctl.abort(caller.reason);
  if (caller.aborted) ctl.abort(caller.reason);
  else caller.addEventListener('abort', onAbort, { once: true });
  const deadline = clock.setTimeout(() => expire('deadline'), limits.deadlineMs);
  const arm = () => {
    idle?.cancel();
    idle = clock.setTimeout(() => expire('idle'), limits.idleMs);
  };
  arm();
  return {
    signal: ctl.signal,
    limits,
    touch: arm,
    done() {
      idle?.cancel();
      deadline.cancel();
      caller.removeEventListener('abort', onAbort);
    },
    get timedOut() {
      return timedOut;
    },
  };
}

/** The retryable failure of an attempt a limit ended: which limit, and the setting that raises it. */
function timeoutFailure(name: string, attempt: Attempt, during: string, cause: unknown): ProviderFailure {
  const l = attempt.limits;
  const [key, ms, what] =
    attempt.timedOut === 'deadline' ? ['attempt_deadline_ms', l.deadlineMs, 'attempt not finished'] : ['timeout_ms', l.idleMs, `no ${during}`];
  const setting = `providers.${l.provider}.${key}`;
  return new ProviderFailure('timeout', `${name}: ${what} within ${ms} ms (claw.runtime.yaml ${setting} raises it)`, {
    retryable: true,
    cause,
    detail: { limit: key, [key]: ms, setting },
  });
}

/** Turn a thrown fetch/read error into a ProviderFailure, or rethrow the caller's abort. */
function classify(e: unknown, name: string, caller: AbortSignal, attempt: Attempt, during: string): never {
  if (caller.aborted) throw caller.reason ?? e;
  if (attempt.timedOut) throw timeoutFailure(name, attempt, during, e);
  if (e instanceof ProviderFailure) throw e;
  // Node's undici puts the socket error code on `cause` (ECONNREFUSED); Bun puts its own on the error.
  const x = e as { code?: unknown; cause?: { code?: unknown }; name?: string };
  const code = x?.cause?.code ?? x?.code;
  const why = typeof code === 'string' && /^[A-Za-z_]{2,40}$/.test(code) ? code : x?.name ?? 'error';
  const reason = during === 'response' ? 'connect' : 'truncated';
  throw new ProviderFailure(reason, `${name}: ${during === 'response' ? 'cannot reach endpoint' : 'connection lost while reading the response'} (${why})`, {
    retryable: true,
    cause: e,
  });
}

export interface PostOptions {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  caller: AbortSignal;
  attempt: Attempt;
  fetch: typeof fetch;
  now: () => number;
}

/** POST JSON; resolves with a 2xx response, throws a classified ProviderFailure otherwise. */
export async function postJson(o: PostOptions): Promise<Response> {
  let res: Response;
  try {
    res = await o.fetch(o.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...o.headers },
      body: JSON.stringify(o.body),
      signal: o.attempt.signal,
      // Never follow a redirect: fetch drops Authorization across origins but not x-api-key/api-key,
      // so a redirect could carry the key elsewhere. A 3xx is reported as the HTTP error it is here.
      redirect: 'manual',
    });
  } catch (e) {
    classify(e, o.name, o.caller, o.attempt, 'response');
  }
  o.attempt.touch();
  if (res.status >= 200 && res.status < 300) return res;
  // The error body is read (bounded) for the API's error type and the server's own message. The message
  // is what tells a user "model not found, try pulling it first"; it is kept out of `message` (which
  // reaches -32020 data and logs) and carried in `detail.server_message`, cleaned by serverMessage().
  let type: string | undefined;
  let said: string | undefined;
  try {
    let text = '';
    await readText(res, o, (t) => void (text += t), 64 * 1024);
    let j: { error?: { type?: unknown; code?: unknown; message?: unknown } | string; type?: unknown; message?: unknown; detail?: unknown } | undefined;
    try {
      j = JSON.parse(text);
    } catch {
      j = undefined;
    }
    const err = typeof j?.error === 'object' && j.error !== null ? j.error : undefined;
    // What the server says is kept only if it does not quote a credential this request sent.
    const secrets = Object.values(o.headers).map((v) => v.replace(/^Bearer /i, '')).filter((v) => v.length >= 8);
    const clean = (x: string | undefined) => (x !== undefined && !secrets.some((k) => x.includes(k)) ? x : undefined);
    type = clean(apiType(err?.type ?? err?.code ?? j?.type));
    const m = typeof j?.error === 'string' ? j.error : err?.message ?? j?.message ?? j?.detail ?? (j === undefined ? text : undefined);
    said = clean(serverMessage(m, res.status));
  } catch (e) {
    if (o.caller.aborted) throw o.caller.reason ?? e;
  }
  const s = res.status;
  throw new ProviderFailure('http', `${o.name}: HTTP ${s}${type ? ` (${type})` : ''}`, {
    status: s,
    retryable: s === 408 || s === 429 || s >= 500,
    retryAfterMs: retryAfterMs(res.headers, o.now()),
    detail: { status: s, ...(type ? { type } : {}), ...(said ? { server_message: said } : {}) },
  });
}

/**
 * The server's own error message, fit for one terminal line: the first line, control characters
 * dropped, at most 160 characters, and anything shaped like a key replaced — some APIs quote part of
 * a rejected key ("Incorrect API key provided: sk-ab***yz"), so for 401 and 403 nothing is kept at all.
 * The caller still passes it through the log redactor, which knows the resolved secrets.
 */
export function serverMessage(m: unknown, status: number): string | undefined {
  if (typeof m !== 'string' || status === 401 || status === 403) return undefined;
  const line = (m.split(/\r?\n/).find((l) => l.trim() !== '') ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/\b(?:sk|pk|rk|key|api|token|bearer)[-_][A-Za-z0-9*._-]{6,}/gi, '[key]')
    .replace(/\b[A-Za-z0-9_-]{32,}\b/g, '[redacted]')
    .trim();
  if (line === '') return undefined;
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/**
 * An API's error type or code (`invalid_request_error`, `rate_limit_exceeded`), kept for the message only if it
 * reads as one: a server that echoes the key it was sent in that field (a gateway's "code": the key) must not
 * put it into an error that reaches a log, a -32020's data or a channel user. So nothing key-shaped
 * (serverMessage's masks) and no run of more than 24 letters and digits.
 */
export function apiType(t: unknown): string | undefined {
  return typeof t === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(t) && !/[A-Za-z0-9]{25}/.test(t) && serverMessage(t, 200) === t ? t : undefined;
}

/** Whitespace carries nothing in a JSON body: a server sending only that (a keep-alive) is idle. */
const hasContent = (text: string) => /\S/.test(text);

/**
 * Read the body as strict UTF-8 text, chunk by chunk. The idle limit is re-armed only for a chunk that
 * `progress` (asked after onText had it) says advanced the answer — default: any non-whitespace
 * character; streams pass their parser's view. The deadline stands whatever comes.
 */
export async function readText(
  res: Response,
  o: Pick<PostOptions, 'name' | 'caller' | 'attempt'>,
  /** Returns true to stop reading: the protocol's end marker came and the rest is not wanted. */
  onText: (text: string) => boolean | void,
  maxBytes = MAX_BODY_BYTES,
  progress: (text: string) => boolean = hasContent,
): Promise<void> {
  if (!res.body) throw malformed(`empty body`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let bytes = 0;
  const decode = (chunk?: Uint8Array) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch (e) {
      throw malformed(`body is not valid UTF-8`, e);
    }
  };
  try {
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (e) {
        classify(e, o.name, o.caller, o.attempt, 'body');
      }
      if (r.done) break;
      bytes += r.value.byteLength;
      if (bytes > maxBytes) throw malformed(`body larger than ${maxBytes} bytes`);
      const t = decode(r.value);
      if (!t) continue;
      const end = onText(t) === true;
      if (progress(t)) o.attempt.touch();
      if (end) {
        // A server may hold the connection open after its end marker; waiting would only time out.
        reader.cancel().catch(() => {});
        return;
      }
    }
    const t = decode();
    if (t) onText(t);
  } catch (e) {
    reader.cancel().catch(() => {}); // stop the download: nothing more of this body is wanted
    throw e;
  }
}

/** Abortable sleep on the injected clock. */
export function sleep(ms: number, signal: AbortSignal, clock: Clock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      t.cancel();
      reject(signal.reason);
    };
    const t = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
