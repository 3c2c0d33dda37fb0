// The offline fallback: a `custom` provider (spec §5.2 protocol "custom") whose endpoint is a
// `file:` URI naming a rules file. It is a deterministic pattern matcher, not a model: the latest
// user message is tested against each rule in order, the first match answers, `default` answers
// when none does. Answers are FemtoClaw messages (seed §5, §6) serialized as the model would write
// them, so they take the same validation path as any model output. docs/providers.md has the format.
import * as v from 'valibot';
import type { ChatMessage } from '../kernel/ports.ts';
import { parseSource } from '../manifest/source.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { ProviderFailure } from './failure.ts';
import { compileLinear } from '../regex/linear-regex.ts';

const outputFields = {
  message: v.optional(v.string()),
  tool_call: v.optional(v.strictObject({ tool: v.pipe(v.string(), v.minLength(1)), args: v.optional(v.record(v.string(), v.unknown())) })),
  raw: v.optional(v.string()),
};
const OUTPUTS = ['message', 'tool_call', 'raw'] as const;
const exactlyOne = (keys: readonly string[]) => (o: Record<string, unknown>) => keys.filter((k) => o[k] !== undefined).length === 1;
const oneOutput = v.check(exactlyOne(OUTPUTS), 'needs exactly one of message, tool_call, raw');

const output = v.pipe(v.strictObject(outputFields), oneOutput);
const rule = v.pipe(
  v.strictObject({ match: v.optional(v.string()), contains: v.optional(v.string()), flags: v.optional(v.pipe(v.string(), v.regex(/^[imsu]*$/, 'flags are a subset of "imsu"'))), ...outputFields }),
  v.check(exactlyOne(['match', 'contains']), 'needs exactly one of match, contains'),
  oneOutput,
);
const rulesFile = v.strictObject({ rules: v.array(rule), default: v.optional(output), after_tool: v.optional(output) });

interface Output {
  message?: string;
  tool_call?: { tool: string; args?: Record<string, unknown> };
  raw?: string;
}
interface RuleIn extends Output {
  match?: string;
  contains?: string;
  flags?: string;
}
interface Rule {
  test(text: string): Record<string, string> | undefined;
  out: Output;
}
export interface Rules {
  file: string;
  rules: Rule[];
  default: Output;
  afterTool: Output;
}

export const DEFAULT_OUTPUT: Output = { message: 'I cannot answer that offline: no rule matches and no model is reachable.' };
/** After a tool ran, the rules answer with its result unless `after_tool` says otherwise. */
export const DEFAULT_AFTER_TOOL: Output = { message: '{{result}}' };

/** `file:///abs/rules.yaml`, or `file:rules.yaml` relative to the file that declared the provider. */
export function rulesPath(endpoint: string, declaredIn: string): string {
  let p: string;
  if (endpoint.startsWith('file://')) {
    const rest = endpoint.slice(7);
    if (!rest.startsWith('/') && !rest.startsWith('localhost/')) throw badConfig(`${endpoint}: a file URI with a host is not a local file`);
    p = rest.startsWith('/') ? rest : rest.slice(9);
  } else if (endpoint.startsWith('file:')) p = endpoint.slice(5);
  else throw badConfig(`endpoint "${endpoint}" is not a file: URI naming a rules file (docs/providers.md)`);
  p = decodeURIComponent(p);
  return p.startsWith('/') || !declaredIn.startsWith('/') ? p : joinPath(dirnameOf(declaredIn), p);
}

const badConfig = (msg: string) => new ProviderFailure('config', `custom provider: ${msg}`);

export function compileRules(file: string, bytes: Uint8Array): Rules {
  const parsed = parseSource(file, bytes);
  if (!parsed.ok) throw badConfig(`${file}: ${parsed.issue.message}`);
  const r = v.safeParse(rulesFile, parsed.source.value);
  if (!r.success) {
    const i = r.issues[0];
    const path = (i.path ?? []).map((s) => String(s.key)).join('.');
    throw badConfig(`${file}: ${path ? `${path}: ` : ''}${i.message}`);
  }
  const doc = r.output as { rules: RuleIn[]; default?: Output; after_tool?: Output };
  const rules = doc.rules.map((x, n): Rule => {
    const { match, contains, flags = '', ...rest } = x;
    const out = rest as Output;
    if (contains !== undefined) {
      const needle = flags.includes('i') ? contains.toLowerCase() : contains;
      return { out, test: (t) => ((flags.includes('i') ? t.toLowerCase() : t).includes(needle) ? {} : undefined) };
    }
    let re: RegExp;
    let linear: ReturnType<typeof compileLinear>;
    try {
      // The message is untrusted text: whether a rule matches is decided in linear time (docs/tools.md
      // "User-written regular expressions"); the host engine only extracts the groups of a text that matches.
      re = new RegExp(match!, flags);
      linear = compileLinear(match!, flags);
    } catch (e) {
      throw badConfig(`${file}: rules.${n}.match: ${(e as Error).message}`);
    }
    return {
      out,
      test: (t) => {
        if (!linear.test(t)) return undefined;
        const m = re.exec(t);
        if (!m) return undefined;
        const groups: Record<string, string> = { ...(m.groups ?? {}) };
        m.forEach((g, k) => (groups[String(k)] = g ?? ''));
        return groups;
      },
    };
  });
  return { file, rules, default: doc.default ?? DEFAULT_OUTPUT, afterTool: doc.after_tool ?? DEFAULT_AFTER_TOOL };
}

/** {{1}}, {{name}} (regex groups), {{input}} (the user message), {{result}} (the last tool result). Unknown → "". */
function fill<T>(value: T, vars: Record<string, string>): T {
  if (typeof value === 'string') return value.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => vars[k] ?? '') as T;
  if (Array.isArray(value)) return value.map((x) => fill(x, vars)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, fill(x, vars)])) as T;
  }
  return value;
}

/** The agent loop's `{"tool_result":{…,"content"|"error"}}` → the result text; anything else as it is. */
function toolResultContent(text: string): string {
  try {
    const r = JSON.parse(text)?.tool_result;
    if (typeof r?.content === 'string') return r.content;
    if (typeof r?.error?.message === 'string') return `error: ${r.error.message}`;
  } catch {}
  return text;
}

/** The answer text for a conversation: deterministic, a pure function of (rules, messages). */
export function answer(rules: Rules, messages: readonly ChatMessage[]): string {
  const convo = messages.filter((m) => m.role !== 'system');
  const last = convo[convo.length - 1];
  let input = '';
  for (let i = convo.length - 1; i >= 0; i--) if (convo[i].role === 'user') { input = convo[i].content; break; }
  const vars: Record<string, string> = { input, result: last?.role === 'tool' ? toolResultContent(last.content) : '' };
  let out: Output = rules.default;
  if (last?.role === 'tool') out = rules.afterTool;
  else {
    for (const r of rules.rules) {
      const groups = r.test(input);
      if (groups) {
        Object.assign(vars, groups);
        out = r.out;
        break;
      }
    }
  }
  const o = fill(out, vars);
  if (o.raw !== undefined) return o.raw;
  if (o.tool_call) return JSON.stringify({ tool_call: { tool: o.tool_call.tool, args: o.tool_call.args ?? {} } });
  return JSON.stringify({ message: { content: o.message ?? '' } });
}
