// The Telegram Bot API over HTTPS (https://core.telegram.org/bots/api): every request is a POST of JSON to
// `{api_url}/bot{token}/{method}`, answered `{ok, result}` or `{ok: false, error_code, description,
// parameters: {retry_after}}`. Every request goes through the network guard (src/net/guarded-fetch.ts)
// with the channel's network settings, so the API host must be allowed. The token is part of every URL:
// it never reaches a log line or an error message (scrubbed here).
import { guardedFetch, NetworkDenied, type NetworkCaps } from '../../net/guarded-fetch.ts';

export type TelegramFailure =
  /** Connection refused/reset, DNS, timeout, a 5xx, a body that is not the API's JSON: retry with backoff. */
  | { kind: 'network'; message: string }
  /** 429 Too Many Requests: wait `retryAfterMs` (parameters.retry_after) and retry. */
  | { kind: 'flood'; retryAfterMs: number; message: string }
  /**
   * The API refused the request (400, 401, 403, 409): retrying the same request does not help. `migrateTo`: the
   * group became a supergroup with that id (ResponseParameters.migrate_to_chat_id); the request may go there.
   */
  | { kind: 'api'; code: number; message: string; migrateTo?: number }
  /**
   * The answer was larger than the client reads (MAX_ANSWER_BYTES): asking for less may help (getUpdates'
   * `limit`). `head`: its first bytes, token masked.
   */
  | { kind: 'oversize'; message: string; head: string }
  /** The network guard refused the API host: a configuration error. */
  | { kind: 'denied'; message: string };

export class TelegramError extends Error {
  constructor(readonly failure: TelegramFailure) {
    super(failure.message);
    this.name = 'TelegramError';
  }
}

export type TelegramFetch = typeof guardedFetch;

export interface TelegramApiOptions {
  apiUrl: string;
  token: string;
  network: NetworkCaps;
  fetch?: TelegramFetch;
}

export interface TelegramApi {
  call<T = unknown>(method: string, params: Record<string, unknown>, o?: { timeoutMs?: number; signal?: AbortSignal }): Promise<T>;
}

/**
 * The most of one answer that is read. A getUpdates answer of 100 text messages is well under 1 MiB; this
 * leaves room for messages heavy with entities and replies without holding more on a small board.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export function telegramApi(o: TelegramApiOptions): TelegramApi {
  const base = `${o.apiUrl.replace(/\/+$/, '')}/bot${o.token}/`;
  const fetch = o.fetch ?? guardedFetch;
  // The token as sent, then any other spelling of it (a proxy's error that echoes the path URL-encoded, `:` as
  // %3A): the part after the bot id is the secret, so it alone is enough to mask.
  const secret = o.token.slice(o.token.indexOf(':') + 1);
  const masks = [o.token, secret.length >= 8 ? secret : ''].filter(Boolean);
  const scrub = (s: string) => masks.reduce((t, m) => t.split(m).join('<token>'), s);
  return {
    async call<T>(method: string, params: Record<string, unknown>, c: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
      let r;
      try {
        r = await fetch(base + method, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(params),
          timeoutMs: c.timeoutMs ?? 30_000,
          maxRedirects: 0,
          maxBytes: MAX_ANSWER_BYTES,
          signal: c.signal,
        }, o.network);
      } catch (e) {
        if (e instanceof NetworkDenied) throw new TelegramError({ kind: 'denied', message: `${method}: ${scrub(e.message)}` });
        throw new TelegramError({ kind: 'network', message: `${method}: ${scrub(e instanceof Error ? e.message : String(e))}` });
      }
      if (r.truncated) throw new TelegramError({ kind: 'oversize', message: `${method}: answer larger than ${MAX_ANSWER_BYTES} bytes`, head: scrub(r.body.slice(0, 512)) });
      let body: { ok?: boolean; result?: unknown; error_code?: number; description?: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } } | undefined;
      try {
        body = r.truncated ? undefined : JSON.parse(r.body);
      } catch {
        body = undefined;
      }
      if (body?.ok === true && r.status === 200) return body.result as T;
      // Masked before it is cut: a token across the cut would otherwise leave its first half unmasked.
      const description = typeof body?.description === 'string' ? scrub(body.description).slice(0, 300) : `HTTP ${r.status}`;
      if (r.status === 429 || body?.error_code === 429) {
        // Seconds, from the server: at least 1 (a 0 would retry at once, in a loop, for as long as it says so),
        // at most an hour; anything but a number of seconds is 5.
        const s = body?.parameters?.retry_after;
        return Promise.reject(new TelegramError({ kind: 'flood', retryAfterMs: (typeof s === 'number' && s >= 0 ? Math.min(Math.max(s, 1), 3600) : 5) * 1000, message: `${method}: ${description}` }));
      }
      if (r.status >= 500 || !body) throw new TelegramError({ kind: 'network', message: `${method}: ${description}` });
      const migrateTo = body.parameters?.migrate_to_chat_id;
      throw new TelegramError({ kind: 'api', code: body.error_code ?? r.status, message: `${method}: ${description}`, ...(Number.isSafeInteger(migrateTo) ? { migrateTo } : {}) });
    },
  };
}
