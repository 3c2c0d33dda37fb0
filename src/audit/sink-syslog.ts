// destination: syslog — each audit record as one RFC 5424 message over UDP (docs/audit.md
// "Destinations"). Node has no unix *datagram* sockets (node:dgram is udp4/udp6 only; node:net
// unix sockets are streams), and /dev/log is a datagram socket, so without native code the local
// syslog daemon is reached on its UDP input: 127.0.0.1:514 by default (claw.runtime.yaml
// `audit.syslog`). Best effort: UDP may drop; send errors are counted and told once.
import { createRequire } from 'node:module';
import type { AuditRecord } from './record.ts';
import type { AuditSink } from './log.ts';

export interface SyslogSinkOptions {
  host?: string;
  port?: number;
  /** RFC 5424 facility (default 13, "log audit"). */
  facility?: number;
  appName?: string;
  hostname?: string;
  procId?: number;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Above this the record is not sent whole (a UDP datagram carries < 64 KiB); its seq and hash still are. */
const MAX_MSG_BYTES = 60_000;
/** RFC 5612 documentation enterprise number: the SD-ID is ours, not registered. */
const SD_ID = 'claw-audit@32473';

/** Severity 4 (warning) for an audit outage, 5 (notice) for refusals and rejections, 6 (informational) for the rest. */
export function syslogSeverity(r: Pick<AuditRecord, 'kind' | 'data'>): number {
  const d = r.data as { decision?: unknown; outcome?: unknown };
  // The log could not write for a while and refused calls meanwhile: more than one refusal (4, warning).
  if (r.kind === 'audit.outage') return 4;
  if (r.kind === 'protocol.rejected') return 5;
  if (r.kind === 'authorization.decided' && d.decision === 'deny') return 5;
  if (r.kind === 'approval.decided' && d.decision !== 'passed') return 5;
  if (r.kind === 'execution.finished' && d.outcome === 'failed') return 5;
  return 6;
}

/** One RFC 5424 message: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] BOM MSG. */
export function formatSyslog(r: AuditRecord, line: string, o: { facility: number; appName: string; hostname: string; procId: number }): string {
  const pri = o.facility * 8 + syslogSeverity(r);
  const sd = `[${SD_ID} seq="${r.seq}" hash="${r.hash}"]`;
  const msg = Buffer.byteLength(line) <= MAX_MSG_BYTES ? line : `{"truncated":true,"seq":${r.seq},"hash":"${r.hash}"}`;
  // MSGID is the record kind (≤ 32 printable ASCII); the BOM marks MSG as UTF-8 (RFC 5424 §6.4).
  return `<${pri}>1 ${r.ts} ${o.hostname} ${o.appName} ${o.procId} ${r.kind} ${sd} \uFEFF${msg}`;
}

export interface SyslogSink extends AuditSink {
  close(): Promise<void>;
  stats(): { sent: number; failed: number };
}

export function syslogSink(o: SyslogSinkOptions): SyslogSink {
  let socket: import('node:dgram').Socket | undefined;
  let sent = 0;
  let failed = 0;
  let warned = false;
  let pending = 0;
  let drained: (() => void) | undefined;
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? 514;
  const fail = (e: unknown) => {
    failed++;
    if (warned) return;
    warned = true;
    o.warn('audit syslog: a message could not be sent (the audit file has the record)', { host, port, error: (e as Error)?.message ?? String(e) });
  };
  let fmt: { facility: number; appName: string; hostname: string; procId: number } | undefined;
  return {
    write(r, line) {
      if (!socket) {
        // Required on first use: no dgram in agents without a syslog destination.
        const req = createRequire(import.meta.url);
        const dgram = req('node:dgram') as typeof import('node:dgram');
        const os = req('node:os') as typeof import('node:os');
        socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
        socket.on('error', fail);
        socket.unref();
        fmt = { facility: o.facility ?? 13, appName: o.appName ?? 'claw', hostname: o.hostname ?? (os.hostname() || '-'), procId: o.procId ?? process.pid };
      }
      const msg = Buffer.from(formatSyslog(r, line, fmt!), 'utf8');
      pending++;
      socket.send(msg, port, host, (e) => {
        pending--;
        if (e) fail(e);
        else sent++;
        if (pending === 0) drained?.();
      });
    },
    async close() {
      const s = socket;
      socket = undefined;
      if (!s) return;
      // Sends still queued (address lookup) would be cancelled by close: wait for them, at most 1 s.
      if (pending > 0) {
        let t: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((res) => {
          drained = res;
          t = setTimeout(res, 1000);
        });
        clearTimeout(t);
      }
      await new Promise<void>((res) => s.close(() => res()));
    },
    stats: () => ({ sent, failed }),
  };
}
