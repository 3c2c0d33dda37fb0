// openAuditSession (src/audit/session.ts): off without Policy audit unless an agent runs; on, one log
// whose records from both recorders form one verifiable chain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAuditSession } from '../../src/audit/session.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { validateOutput } from '../../src/femtoclaw/validate.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { runGates } from '../../src/gates/pipeline.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok } from './helpers/gate-fakes.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-audit-session-'));
const base = { now: () => Date.UTC(2026, 10, 22), monotonic: () => 0, redact: (s: string) => s.split('hunter22').join('[REDACTED]') };

test('no Policy audit: off for operator sessions (no file created), on for an agent', () => {
  const path = join(dir, 'a', 'audit.jsonl');
  assert.is(openAuditSession({ ...base, policies: [{ name: 'p', spec: { rules: [] } }], path }), undefined);
  assert.not.ok(existsSync(path));
  const s = openAuditSession({ ...base, policies: [], forAgent: true, path });
  assert.ok(s);
  s!.close();
  assert.ok(existsSync(path));
});

test('an agent turn and its tool call land in one chain that verifies, secrets redacted', async () => {
  const path = join(dir, 'b', 'audit.jsonl');
  const s = openAuditSession({ ...base, policies: [{ name: 'p', spec: { rules: [], audit: { log_outputs: true } } }], path })!;
  const check = compileArgumentSchema({ type: 'object' });
  const raw = '{"tool_call":{"tool":"t1","args":{"password":"hunter22"}}}';
  const v = validateOutput(raw, new Map([['t1', check]]));
  s.recordVerdict(raw, v, { turn: 'turn-1' });
  const deps = makeDeps();
  deps.observe = s.auditor.observe;
  const call = makeCall({ tool: boundTool({ impl: fakeImpl(async () => ok('done')) }), args: (v as any).args });
  assert.equal(await s.auditor.run(call, 'agent', () => runGates(call, check, deps)), ok('done'));
  s.close();
  const text = readFileSync(path, 'utf8');
  assert.not.ok(text.includes('hunter22'));
  assert.equal(
    text.split('\n').slice(0, -1).map((l) => JSON.parse(l).kind),
    ['audit.opened', 'protocol.received', 'protocol.validated', 'capability.requested', 'authorization.decided', 'execution.started', 'execution.finished'],
  );
  assert.equal(verifyAuditText(text).verified, 7);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
