// `claw eval`: an agent evaluation anyone can run against their own model (docs/agent.md "Measuring a
// model"). A scenario is one user message and what should come of it — a tool call with arguments, a
// message without any tool, or a call the policy refuses — run as a fresh conversation through the real
// agent loop (prompt, provider chain, output modes, validator, gates). This file is the pure part:
// reading scenarios, scoring one turn, the totals, the table. src/cli/eval.ts runs them.
import { ClawError } from '../protocol/errors.ts';
import type { TurnResult } from './types.ts';

export type Expectation =
  /** The first tool call of the turn names this tool, and its arguments hold these values (a subset). */
  | { tool: string; args?: Record<string, unknown> }
  /** The turn ends with a message and calls no tool; `contains`: the reply holds this text (case-insensitive). */
  | { message: true; contains?: string }
  /** The model asks for this tool and the gates refuse it (policy, approval), and the turn still ends with a message. */
  | { refused: string };

export interface Scenario {
  name: string;
  message: string;
  expect: Expectation;
  /** Approve an approval the turn asks for (default: deny). */
  approve?: boolean;
}

export interface ScenarioResult {
  name: string;
  ok: boolean;
  /** Why it failed, in words. */
  why?: string;
  outcome: TurnResult['outcome'] | 'error';
  modelCalls: number;
  corrections: number;
  tokensIn: number;
  tokensOut: number;
  ms: number;
  mode?: string;
  provider?: string;
}

export interface EvalTotals {
  scenarios: number;
  passed: number;
  successRate: number;
  modelCalls: number;
  corrections: number;
  tokensIn: number;
  tokensOut: number;
  ms: number;
  /** Model calls per scenario, on average. */
  callsPerScenario: number;
}

/** A scenarios file (YAML or JSON): `scenarios: [{name, message, expect, approve?}]`. Every problem is a usage error naming its place. */
export function readScenarios(value: unknown): Scenario[] {
  const list = (value as { scenarios?: unknown })?.scenarios;
  if (!Array.isArray(list) || list.length === 0) throw new ClawError('usage', 'the scenarios file needs a non-empty `scenarios` list');
  return list.map((s: any, i) => {
    const at = `scenarios[${i}]`;
    if (typeof s !== 'object' || s === null) throw new ClawError('usage', `${at} is not an object`);
    const name = typeof s.name === 'string' && s.name !== '' ? s.name : `scenario-${i + 1}`;
    if (typeof s.message !== 'string' || s.message.trim() === '') throw new ClawError('usage', `${at} (${name}): \`message\` must be a non-empty string`);
    const e = s.expect;
    let expect: Expectation;
    if (e && typeof e.tool === 'string') {
      if (e.args !== undefined && (typeof e.args !== 'object' || e.args === null || Array.isArray(e.args))) throw new ClawError('usage', `${at} (${name}): \`expect.args\` must be an object`);
      expect = e.args === undefined ? { tool: e.tool } : { tool: e.tool, args: e.args };
    } else if (e && e.message === true) {
      expect = typeof e.contains === 'string' ? { message: true, contains: e.contains } : { message: true };
    } else if (e && typeof e.refused === 'string') {
      expect = { refused: e.refused };
    } else {
      throw new ClawError('usage', `${at} (${name}): \`expect\` needs one of {tool, args?}, {message: true, contains?}, {refused: <tool>}`);
    }
    return { name, message: s.message, expect, ...(s.approve === true ? { approve: true } : {}) };
  });
}

/** Did the turn do what the scenario expects? */
export function score(s: Scenario, r: TurnResult): { ok: boolean; why?: string } {
  const first = r.toolCalls[0];
  const e = s.expect;
  if ('tool' in e) {
    if (!first) return { ok: false, why: r.outcome === 'gave_up' ? `no valid output (${r.problem ?? 'gave up'})` : 'no tool was called' };
    if (first.tool !== e.tool) return { ok: false, why: `called ${first.tool}, not ${e.tool}` };
    for (const [k, v] of Object.entries(e.args ?? {})) {
      if (!sameJson(first.args[k], v)) return { ok: false, why: `argument ${k} was ${JSON.stringify(first.args[k]) ?? 'missing'}, not ${JSON.stringify(v)}` };
    }
    return { ok: true };
  }
  if ('refused' in e) {
    const call = r.toolCalls.find((c) => c.tool === e.refused);
    if (!call) return { ok: false, why: first ? `called ${first.tool}, not ${e.refused}` : `${e.refused} was not asked for` };
    if (call.ok) return { ok: false, why: `${e.refused} ran: it was not refused` };
    if (r.outcome !== 'message') return { ok: false, why: `no final message after the refusal (${r.outcome})` };
    return { ok: true };
  }
  if (r.outcome !== 'message') return { ok: false, why: r.outcome === 'gave_up' ? `no valid output (${r.problem ?? 'gave up'})` : r.outcome };
  if (first) return { ok: false, why: `called ${first.tool}; a message without a tool was expected` };
  if (e.contains !== undefined && !r.reply.toLowerCase().includes(e.contains.toLowerCase())) return { ok: false, why: `the reply does not mention "${e.contains}"` };
  return { ok: true };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function resultOf(s: Scenario, r: TurnResult, ms: number): ScenarioResult {
  const v = score(s, r);
  return {
    name: s.name,
    ok: v.ok,
    ...(v.why ? { why: v.why } : {}),
    outcome: r.outcome,
    modelCalls: r.modelCalls ?? 0,
    corrections: r.rejections,
    tokensIn: r.tokens?.input ?? 0,
    tokensOut: r.tokens?.output ?? 0,
    ms: Math.round(ms),
    ...(r.mode ? { mode: r.mode } : {}),
    ...(r.provider ? { provider: r.provider } : {}),
  };
}

export function totalsOf(results: readonly ScenarioResult[]): EvalTotals {
  const sum = (f: (r: ScenarioResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const passed = results.filter((r) => r.ok).length;
  const calls = sum((r) => r.modelCalls);
  return {
    scenarios: results.length,
    passed,
    successRate: results.length === 0 ? 0 : Math.round((passed / results.length) * 1000) / 1000,
    modelCalls: calls,
    corrections: sum((r) => r.corrections),
    tokensIn: sum((r) => r.tokensIn),
    tokensOut: sum((r) => r.tokensOut),
    ms: sum((r) => r.ms),
    callsPerScenario: results.length === 0 ? 0 : Math.round((calls / results.length) * 100) / 100,
  };
}

/** The results as a fixed-width table, one row per scenario and a total row. */
export function evalTable(results: readonly ScenarioResult[], t: EvalTotals): string {
  const head = ['scenario', 'ok', 'calls', 'corr', 'tok in', 'tok out', 'ms', 'mode', 'why'];
  const rows = results.map((r) => [r.name, r.ok ? 'yes' : 'NO', String(r.modelCalls), String(r.corrections), String(r.tokensIn), String(r.tokensOut), String(r.ms), r.mode ?? '-', r.why ?? '']);
  rows.push([`total ${t.passed}/${t.scenarios} (${Math.round(t.successRate * 100)}%)`, '', String(t.modelCalls), String(t.corrections), String(t.tokensIn), String(t.tokensOut), String(t.ms), '', '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.slice(0, -1).map(line), line(widths.map((w) => '-'.repeat(w))), line(rows[rows.length - 1]!)].join('\n') + '\n';
}
