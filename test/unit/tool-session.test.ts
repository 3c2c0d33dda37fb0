// The tools module's session object (src/runtime/tool-session.ts): opened at start(), gone at stop(); a start
// that fails leaves nothing open (the audit log it opened is closed) and no session behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolsModule } from '../../src/runtime/tools-module.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { NO_TELEMETRY } from '../../src/kernel/ports.ts';
import type { LedgerStore } from '../../src/kernel/ledger.ts';
import type { AuditSession } from '../../src/audit/session.ts';
import { FakeClock, captureLogger, makeManifest } from './helpers/fakes.ts';

const ledgerStore: LedgerStore = { load: async () => undefined, save: async () => {} };
const session = () => ({ manifest: makeManifest(2, { tools: [] }), protocolVersion: '0.3.0', level: 2 as const, capabilities: {}, abort: new AbortController() });

function fakeAudit(): AuditSession & { closed: number } {
  const a = { closed: 0, auditor: { observe() {}, run: (_c: unknown, _o: unknown, go: () => unknown) => go() }, settings: { notes: [] }, close: async () => void a.closed++ };
  return a as unknown as AuditSession & { closed: number };
}

test('a start that fails closes the audit log it opened and leaves no session', async () => {
  const audit = fakeAudit();
  const mod = toolsModule({
    config: {},
    clock: new FakeClock(),
    log: captureLogger(),
    redactor: new Redactor(),
    notify() {},
    ledgerStore,
    openAudit: () => audit,
    environment: async () => {
      throw new Error('no tool environment on this board');
    },
  });
  let err: unknown;
  await mod.start!(session(), { telemetry: NO_TELEMETRY } as any).catch((e) => (err = e));
  assert.match(String(err), 'no tool environment');
  assert.is(audit.closed, 1);
  assert.is(mod.agentTools(), undefined);
  assert.is(mod.audit(), undefined);
});

test('the session is there from start() to stop(), and its audit log closes at stop', async () => {
  const audit = fakeAudit();
  const mod = toolsModule({
    config: {},
    clock: new FakeClock(),
    log: captureLogger(),
    redactor: new Redactor(),
    notify() {},
    ledgerStore,
    openAudit: () => audit,
    environment: async () => ({ registry: {} as any, isolationProblem: () => undefined, isolationNotes: () => [], host: {} as any }),
  });
  const s = session();
  await mod.start!(s, { telemetry: NO_TELEMETRY } as any);
  assert.equal(mod.agentTools()?.list(), []);
  assert.is(mod.audit(), audit);
  const tools = mod.agentTools()!;
  await mod.stop!(s);
  assert.is(audit.closed, 1);
  assert.is(mod.agentTools(), undefined);
  assert.equal(await tools.call('echo', {}, { requestId: 'r', signal: new AbortController().signal } as any), { ok: false, code: -32602, message: 'Invalid params: unknown tool "echo"' });
});

test.run();
