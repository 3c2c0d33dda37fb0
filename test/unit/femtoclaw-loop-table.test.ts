// The validator's verdict table (./femtoclaw-rows.ts) through the agent loop: for
// each case the verdict, that no tool ran, the telemetry event and the audit record. Every row
// is one model output in a real runTurn with the real validator and correction builder, a real
// hash-chained AuditLog (recordValidation, verified afterwards with verifyAuditText) and a real
// Telemetry sink (sanitize, queue, exporter). A rejected row is followed by a valid message so the turn
// ends; a valid tool call by a message after its result.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runTurn } from '../../src/agent/loop.ts';
import type { ChatMessage, LoopDeps, ToolOutcome } from '../../src/agent/types.ts';
import { validateOutput, type CapabilityRegistry } from '../../src/femtoclaw/validate.ts';
import { correctionFor } from '../../src/femtoclaw/correction.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { AuditLog, type AuditFile } from '../../src/audit/log.ts';
import { recordValidation } from '../../src/audit/protocol-audit.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { sha256Hex } from '../../src/audit/hash.ts';
import { Telemetry } from '../../src/telemetry/telemetry.ts';
import { telemetrySettings } from '../../src/telemetry/config.ts';
import type { TelemetryEvent } from '../../src/telemetry/event.ts';
import { FakeClock } from './helpers/fakes.ts';
import { ROWS, SCHEMAS, tc, type Row } from './femtoclaw-rows.ts';

const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const AFTER = '{"message":{"content":"AFTER-OK"}}';

function memFile(): AuditFile & { text: string } {
  const f = {
    text: '',
    tail: () => ({ torn: new Uint8Array(), tornAt: 0 }),
    truncate() {},
    append(line: string) {
      f.text += line;
    },
    sync() {},
    close() {},
  };
  return f;
}

async function runRow(raw: string, limits: Record<string, number> = {}) {
  const reg = new Map([...Object.entries(SCHEMAS)].map(([n, s]) => [n, compileArgumentSchema(s)])) as CapabilityRegistry;
  const file = memFile();
  const audit = AuditLog.open({ file, now: () => Date.UTC(2026, 10, 22), redact: (s) => s, fsync: 'none' });
  const exported: TelemetryEvent[] = [];
  const telemetry = new Telemetry(
    telemetrySettings({ exporters: [{ type: 'console' }] }),
    [{ exporter: { type: 'memory', export: async (b) => void exported.push(...b) }, batch: { max_size: 1000, flush_interval_ms: 1000 } }],
    { clock: new FakeClock(), claw: '0.3.0', agent: 'table-agent', onExportError: () => {} },
  );
  const calls: [string, Record<string, unknown>][] = [];
  const sent: ChatMessage[][] = [];
  const script = [raw, AFTER, AFTER];
  const history: ChatMessage[] = [];
  let ids = 0;
  const d: LoopDeps = {
    systemPrompt: 'SYSTEM',
    async complete(messages) {
      sent.push(messages.map((m) => ({ ...m })));
      return { text: script.shift()!, provider: 'p' };
    },
    validate: (r) => validateOutput(r, reg, limits),
    correction: (r) => correctionFor(r, { tools: [...reg.keys()] }),
    async callTool(name, args): Promise<ToolOutcome> {
      calls.push([name, args]);
      return { ok: true, result: { content: [{ type: 'text', text: 'TOOL-RAN' }] } };
    },
    history: { messages: () => history, append: async (m) => void history.push(m) },
    recordVerdict: (r, v, ctx) => recordValidation(audit, { logInputs: true }, r, v, ctx),
    telemetry,
    redact: (s) => s,
    newId: () => `id-${++ids}`,
    now: () => 0,
  };
  const result = await runTurn('USER-TEXT', d, new AbortController().signal);
  await telemetry.close();
  audit.close();
  const verified = verifyAuditText(file.text);
  const records = file.text.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; data: Record<string, any> });
  return { result, calls, sent, events: exported.filter((e) => e.category !== 'metrics'), records: records.filter((r) => r.kind !== 'audit.opened'), verified };
}

/** Rows whose output reaches the loop as text. Byte rows (invalid UTF-8) never do: the provider's HTTP
 *  reader decodes with a fatal decoder and fails the response as malformed (src/provider/http.ts). */
const TEXT_ROWS = ROWS.filter((r): r is Row & { 1: string } => typeof r[1] === 'string');

test(`the table runs through the loop: ${TEXT_ROWS.length} of ${ROWS.length} rows are text outputs`, () => {
  assert.ok(TEXT_ROWS.length >= 40);
  assert.is(ROWS.length - TEXT_ROWS.length, 1);
});

for (const row of TEXT_ROWS) {
  const [name, raw, e, limits] = row;
  test(`loop: ${name}`, async () => {
    const { result, calls, sent, events, records, verified } = await runRow(raw, limits);
    assert.ok(verified.ok, JSON.stringify(verified));
    const received = records[0]!;
    assert.is(received.kind, 'protocol.received');
    // The hash is over the bytes received; the stored text is made well-formed (a lone surrogate → U+FFFD, src/audit/sanitize.ts).
    assert.equal([received.data.bytes, received.data.sha256, received.data.output, received.data.provider], [new TextEncoder().encode(raw).length, sha256Hex(raw), wellFormed(raw), 'p']);
    assert.equal(events[0] && [events[0].event, events[0].category, events[0].bytes], ['protocol.received', 'protocol', raw.length]);

    if ('valid' in e) {
      const v = records[1]!;
      assert.equal([v.kind, v.data.form, v.data.tool], ['protocol.validated', e.form, e.form === 'tool_call' ? e.tool : undefined]);
      assert.equal([events[1]!.event, events[1]!.form, events[1]!.tool], ['protocol.validated', e.form, e.form === 'tool_call' ? e.tool : undefined]);
      if (e.form === 'message') {
        // A message is the reply and is never executed.
        assert.equal([result.outcome, result.reply, result.rejections, calls.length], ['message', e.content ?? result.reply, 0, 0]);
        assert.is(sent.length, 1);
      } else {
        // A valid tool call: exactly one call into the gate path, announced before it runs.
        assert.equal(calls.map(([t]) => t), [e.tool]);
        assert.equal([events[2]!.event, events[2]!.tool, events[2]!.request_id], ['capability.requested', e.tool, 'id-2']);
        assert.equal([result.outcome, result.reply, result.rejections], ['message', 'AFTER-OK', 0]);
      }
      assert.not.ok(events.some((x) => x.event === 'protocol.rejected'));
      return;
    }

    // Rejected: nothing ran, one rejection audited and reported, a correction went back, the next output answered.
    assert.is(calls.length, 0);
    const rej = records[1]!;
    assert.equal([rej.kind, rej.data.step, rej.data.reason], ['protocol.rejected', e.step, e.reason]);
    if (e.field !== undefined) assert.is(rej.data.field, e.field);
    if (e.tool !== undefined) assert.is(rej.data.tool, e.tool);
    const ev = events.find((x) => x.event === 'protocol.rejected')!;
    assert.equal([ev.category, ev.step, ev.reason], ['errors', e.step, e.reason]);
    assert.equal([result.outcome, result.reply, result.rejections], ['message', 'AFTER-OK', 1]);
    assert.is(sent.length, 2);
    const correction = sent[1]![sent[1]!.length - 1]!;
    assert.is(correction.role, 'user');
    assert.ok(correction.content.startsWith('Your previous output was rejected'), correction.content);
    // The model's output is never echoed into telemetry (spec §5.11) — a content or argument value never.
    const all = JSON.stringify(events);
    for (const secret of ['USER-TEXT', 'SYSTEM', 'AFTER-OK']) assert.not.ok(all.includes(secret), secret);
  });
}

test('a rejected output whose tool "name" is model prose: the prose reaches the audit log, never telemetry', async () => {
  const prose = 'Let me think step by step about what the user wants before I call anything at all';
  for (const raw of [tc(prose, {}), `{"tool_call":{"tool":"echo","args":{"text":"x"},"${prose}":1}}`, `{"${prose}":{"content":"x"}}`]) {
    const { calls, events, records } = await runRow(raw);
    assert.is(calls.length, 0);
    assert.ok(JSON.stringify(records).includes(prose.slice(0, 40)), 'the audit log keeps what the model sent');
    assert.not.ok(JSON.stringify(events).includes(prose.slice(0, 20)), `telemetry carries model text: ${JSON.stringify(events.find((x) => x.event === 'protocol.rejected'))}`);
  }
});

test.run();
