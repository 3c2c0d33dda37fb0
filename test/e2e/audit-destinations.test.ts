// Policy `audit: {destination: sqlite, retention: "1d"}` through dist/claw.mjs (docs/audit.md
// "Segments and retention", "Destinations"): an audit directory seeded with three days of history
// is pruned to the last day at start, the directory still verifies with the retention boundary
// reported, and the session's records are mirrored into the sqlite table line for line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, initParams, startClaw } from './helpers/claw-process.ts';
import { AuditLog } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { nodeAuditSegments } from '../../src/audit/node-segments.ts';
import { parseSegmentName } from '../../src/audit/segments.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-audit-dest-'));
const HOUR = 3_600_000;
const ECHO = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };

function writeAgent() {
  const spec = {
    identity: { inline: { name: 'audit-agent', personality: 'Test.', autonomy: 'autonomous' } },
    providers: [{ inline: { name: 'none', protocol: 'openai-compatible', endpoint: 'http://127.0.0.1:9/v1', model: 'm', auth: { type: 'none' } } }],
    channels: [{ inline: { name: 'terminal', type: 'cli', transport: 'stdio', auth: { secret_ref: 'CLI_TOKEN' }, access_control: { mode: 'open' } } }],
    tools: [{ inline: { name: 'echo', description: 'Repeats a text back', annotations: { readOnlyHint: true }, input_schema: ECHO } }],
    sandbox: { inline: { level: 'none', capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'scoped', mount_paths: [{ path: dir, permissions: 'ro' }] } } } },
    policies: [{ inline: { name: 'audited', rules: [{ id: 'rest', action: 'allow', scope: 'all' }], audit: { destination: 'sqlite', retention: '1d', log_outputs: true } } }],
  };
  writeFileSync(join(dir, 'claw.yaml'), JSON.stringify({ claw: '0.3.0', kind: 'Claw', metadata: { name: 'audit-agent', version: '1.0.0' }, spec }));
  writeFileSync(join(dir, 'claw.runtime.yaml'), JSON.stringify({ data_dir: join(dir, 'data') }));
}

/** Three days of history: segments closed 48 h and 25 h ago (both past the 1 d retention), an active one begun 25 h ago. */
function seed(auditDir: string): void {
  const t = Date.now();
  let now = t - 72 * HOUR;
  const log = AuditLog.open({ file: openAuditFile(join(auditDir, 'audit.jsonl')), now: () => now, redact: (s) => s, fsync: 'none', segments: nodeAuditSegments(auditDir, { maxAgeMs: 20 * HOUR, maxBytes: 1 << 30 }) });
  for (const ago of [48, 25, 24]) {
    now = t - ago * HOUR;
    log.append('execution.finished', { tool: 'echo', request_id: `old-${ago}`, outcome: 'ok' });
  }
  log.close();
}

test('claw run with audit {destination: sqlite, retention: 1d}: old segments pruned, directory verifies, rows equal the file', async () => {
  writeAgent();
  const auditDir = join(dir, 'data', 'audit');
  seed(auditDir);
  assert.is(readdirSync(auditDir).length, 3);
  const claw = startClaw(['run', 'claw.yaml'], { cwd: dir, env: { HOME: dir, CLI_TOKEN: 'cli-token-123456' } });
  try {
    const init = await claw.request('claw.initialize', initParams(), 'init');
    assert.ok(init.result, JSON.stringify(init.error) + claw.stderr());
    for (const i of [1, 2]) {
      const r = await claw.request('claw.tool.call', { name: 'echo', arguments: { text: `hi ${i}` }, context: { request_id: `r${i}`, identity: 'audit-agent' } }, `c${i}`);
      assert.equal(r.result, { content: [{ type: 'text', text: `hi ${i}` }] }, JSON.stringify(r) + claw.stderr());
    }
  } finally {
    await claw.end();
  }
  assert.match(claw.stderr(), /audit destination sqlite: records also mirrored into/);
  assert.match(claw.stderr(), /audit retention 86400 s: segment files of 21600 s in /);

  // The segments closed 48 h and 25 h ago are gone; the one closed at start (begun 25 h ago) and the active file remain.
  const files = readdirSync(auditDir).filter((f) => f.endsWith('.jsonl')).sort();
  assert.is(files.length, 2, files.join());
  assert.is(files[1], 'audit.jsonl');
  const closed = parseSegmentName(files[0])!;
  assert.ok(Date.now() - closed.closedAtMs < 5 * 60_000, files[0]);

  const v = spawnSync(process.execPath, [CLAW, 'audit', 'verify', auditDir, '--json'], { encoding: 'utf8' });
  assert.is(v.status, 0, v.stdout + v.stderr);
  const out = JSON.parse(v.stdout);
  const keptFirst = JSON.parse(readFileSync(join(auditDir, files[0]), 'utf8').split('\n')[0]);
  assert.equal([out.ok, out.segments, out.retained_from], [true, 2, { file: files[0], seq: keptFirst.seq, prev: keptFirst.prev }]);
  assert.is(keptFirst.kind, 'audit.segment');
  const text = spawnSync(process.execPath, [CLAW, 'audit', 'verify', auditDir], { encoding: 'utf8' });
  assert.match(text.stdout, new RegExp(`history begins at seq ${keptFirst.seq} \\(${files[0]}\\); older segments were deleted by retention`));

  // This session's records (the active file) are the mirror's rows, line for line.
  const lines = readFileSync(join(auditDir, 'audit.jsonl'), 'utf8').split('\n').slice(0, -1);
  assert.equal(lines.map((l) => JSON.parse(l).kind), ['audit.segment', 'audit.opened', ...Array(2).fill(['capability.requested', 'authorization.decided', 'execution.started', 'execution.finished']).flat()]);
  const db = await openDatabase({ path: join(auditDir, 'audit.sqlite'), adapter: 'auto' });
  const rows = db.prepare('SELECT record FROM audit_records ORDER BY seq').all();
  const byKind = db.prepare("SELECT count(*) AS n FROM audit_records WHERE kind = 'execution.finished'").get();
  db.close();
  assert.equal(rows.map((r) => r.record), lines);
  assert.is(byKind!.n, 2);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
