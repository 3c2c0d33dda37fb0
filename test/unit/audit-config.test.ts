// claw.runtime.yaml `audit:` (src/audit/config.ts via runtimeConfigSchema) and the default segment span.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import { segmentMaxAgeMs } from '../../src/audit/session.ts';

const parse = (audit: unknown) => v.safeParse(runtimeConfigSchema, { audit });

test('the documented audit section parses; a bad URL, port or unknown key does not', () => {
  const ok = parse({
    segment_seconds: 21600,
    segment_max_bytes: 67108864,
    sqlite: { path: '/var/lib/claw/audit.sqlite' },
    webhook: { url: 'https://audit.example/ingest', auth_secret_ref: 'AUDIT_TOKEN', batch_max: 100, flush_ms: 1000, queue_max: 1000, timeout_ms: 5000 },
    syslog: { host: '127.0.0.1', port: 514, facility: 13, app_name: 'claw' },
  });
  assert.ok(ok.success, JSON.stringify(ok.issues));
  assert.not.ok(parse({ webhook: { url: 'ftp://x' } }).success);
  assert.not.ok(parse({ webhook: {} }).success);
  assert.not.ok(parse({ syslog: { port: 70000 } }).success);
  assert.not.ok(parse({ syslog: { facility: 24 } }).success);
  assert.not.ok(parse({ destination: 'sqlite' }).success);
});

test('segment span: a quarter of the retention, between 1 s and 1 day, or segment_seconds', () => {
  assert.is(segmentMaxAgeMs(86400), 6 * 3600 * 1000);
  assert.is(segmentMaxAgeMs(90 * 86400), 86_400_000);
  assert.is(segmentMaxAgeMs(2), 1000);
  assert.is(segmentMaxAgeMs(0), 1000);
  assert.is(segmentMaxAgeMs(86400, { segment_seconds: 60 }), 60_000);
});

test.run();
