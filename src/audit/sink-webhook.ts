// destination: webhook — audit records POSTed in batches (docs/audit.md "Destinations"). A copy,
// never the record: the hash-chained file is written first and synchronously; this never blocks the
// tool path (a bounded in-memory queue; when full, records are dropped and counted), never retries
// (a failed batch is counted as dropped), and tells the log once per kind of trouble.
import type { AuditRecord } from './record.ts';
import type { AuditSink } from './log.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface WebhookSinkOptions {
  url: string;
  /** Resolves the `Authorization: Bearer` token (a secret_ref); called once, before the first POST. */
  token?: () => Promise<string>;
  batchMax?: number;
  flushMs?: number;
  queueMax?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface WebhookSink extends AuditSink {
  /** Send what is queued now (tests; close). */
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): { sent: number; dropped: number; failed: number; queued: number };
}

export function webhookSink(o: WebhookSinkOptions): WebhookSink {
  const batchMax = o.batchMax ?? 100;
  const queueMax = o.queueMax ?? 1000;
  const flushMs = o.flushMs ?? 1000;
  const timeoutMs = o.timeoutMs ?? 5000;
  const queue: string[] = [];
  let sent = 0;
  let dropped = 0;
  let failed = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: Promise<void> | undefined;
  let auth: Promise<string | undefined> | undefined;
  let closed = false;
  const warned = new Set<string>();
  const warnOnce = (key: string, msg: string, fields?: Record<string, unknown>) => {
    if (warned.has(key)) return;
    warned.add(key);
    o.warn(msg, fields);
  };

  const schedule = (ms: number) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, timerDelay(ms));
    // Never keeps the process alive on its own.
    (timer as { unref?: () => void }).unref?.();
  };

  async function postOne(): Promise<void> {
    const batch = queue.splice(0, batchMax);
    if (batch.length === 0) return;
    try {
      auth ??= o.token ? o.token() : Promise.resolve(undefined);
      const token = await auth;
      const res = await (o.fetch ?? fetch)(o.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        // Each line is already the record's canonical JSON: no re-serialization.
        body: `{"records":[${batch.join(',')}]}`,
        signal: AbortSignal.timeout(timerDelay(timeoutMs)),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      sent += batch.length;
    } catch (e) {
      failed += batch.length;
      // The URL may carry a token in its query: only the origin is named.
      warnOnce('post', 'audit webhook: a batch could not be delivered; its records are dropped from the webhook copy (the audit file has them)', { origin: originOf(o.url), error: (e as Error).message });
    }
  }

  function flush(): Promise<void> {
    if (inflight) return inflight;
    inflight = (async () => {
      while (queue.length > 0) await postOne();
    })().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    write(_r: AuditRecord, line: string) {
      if (closed) return;
      if (queue.length >= queueMax) {
        dropped++;
        warnOnce('drop', 'audit webhook: queue full, records dropped from the webhook copy (the audit file has them)', { queue_max: queueMax });
        return;
      }
      queue.push(line);
      schedule(queue.length >= batchMax ? 0 : flushMs);
    },
    flush,
    async close() {
      if (closed) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      // One bounded last attempt: shutdown waits at most timeout_ms for the copy, never longer.
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([flush(), new Promise<void>((res) => (t = setTimeout(res, timerDelay(timeoutMs))))]);
      clearTimeout(t);
      closed = true;
      dropped += queue.splice(0).length;
      if (dropped + failed > 0) o.warn('audit webhook: records not delivered this session', { dropped, failed, sent });
    },
    stats: () => ({ sent, dropped, failed, queued: queue.length }),
  };
}

/** Scheme, host and port only: a webhook URL may carry a token in its path or query, never logged. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
