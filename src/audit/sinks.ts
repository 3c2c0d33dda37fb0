// Policy `audit.destination` (spec §5.9) → the copy made of each record besides the hash-chained
// file, which stays the source of truth for every destination (it is what `claw audit verify`
// checks). Where a copy goes comes from claw.runtime.yaml `audit:` (./config.ts) — the Policy schema
// has no endpoint field. docs/audit.md "Destinations".
import { originOf } from './sink-webhook.ts';
import type { AuditSink } from './log.ts';
import type { AuditSettings } from './settings.ts';
import type { AuditRuntimeConfig } from './config.ts';
import type { AdapterName } from '../memory/sqlite/types.ts';
import { sqliteSink, type SqliteSink } from './sink-sqlite.ts';
import { webhookSink, type WebhookSink } from './sink-webhook.ts';
import { syslogSink, type SyslogSink } from './sink-syslog.ts';

export type AuditMirror = (SqliteSink | WebhookSink | SyslogSink) & AuditSink;

export interface AuditSinkDeps {
  /** Resolves a secret_ref (the webhook token). */
  secret?(ref: string): Promise<string>;
  /** claw.runtime.yaml memory.adapter, reused for the sqlite copy. */
  sqliteAdapter?: AdapterName | 'auto';
  fetch?: typeof fetch;
}

export function openAuditSink(
  s: AuditSettings,
  o: { dir: string; runtime?: AuditRuntimeConfig; deps?: AuditSinkDeps; warn(msg: string, fields?: Record<string, unknown>): void },
): { sink?: AuditMirror; note?: string } {
  const rt = o.runtime ?? {};
  switch (s.destination) {
    case 'file':
      return {};
    case 'sqlite': {
      const path = rt.sqlite?.path ?? `${o.dir}/audit.sqlite`;
      const sink = sqliteSink({ path, adapter: o.deps?.sqliteAdapter, warn: o.warn });
      // Start opening now (the module and the database load off the tool path), rows follow.
      void sink.flush();
      return { sink, note: `audit destination sqlite: records also mirrored into ${path} (table audit_records); the hash-chained file stays the record` };
    }
    case 'webhook': {
      const w = rt.webhook;
      if (!w) return { note: 'audit destination webhook: no audit.webhook.url in claw.runtime.yaml, so no copy is sent; records go to the hash-chained audit file only' };
      const ref = w.auth_secret_ref;
      const secret = o.deps?.secret;
      const sink = webhookSink({
        url: w.url,
        token: ref && secret ? () => secret(ref) : undefined,
        batchMax: w.batch_max,
        flushMs: w.flush_ms,
        queueMax: w.queue_max,
        timeoutMs: w.timeout_ms,
        fetch: o.deps?.fetch,
        warn: o.warn,
      });
      return { sink, note: `audit destination webhook: records also POSTed in batches to ${originOf(w.url)} (best effort: a full queue or a failed batch drops the copy, counted); the hash-chained file stays the record` };
    }
    case 'syslog': {
      const y = rt.syslog ?? {};
      const sink = syslogSink({ host: y.host, port: y.port, facility: y.facility, appName: y.app_name, warn: o.warn });
      return { sink, note: `audit destination syslog: records also sent as RFC 5424 over UDP to ${y.host ?? '127.0.0.1'}:${y.port ?? 514} (Node cannot write to the /dev/log datagram socket); the hash-chained file stays the record` };
    }
  }
}
