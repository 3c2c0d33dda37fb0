// `claw doctor <manifest>`: can each Provider of the manifest be used, and how? Per provider, in order:
// the endpoint answers, the key is accepted, the model is there (OpenAI `GET /v1/models`, Ollama's
// `GET /api/tags`, Anthropic `GET /v1/models`), and — with `probe` — whether the server does native tool
// calling and structured output (one tiny chat request each, a few tokens). Nothing here is needed to run
// an agent; it tells a user before the first chat why a model would not answer (docs/providers.md "Doctor").
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { ProviderSpec } from '../manifest/schema/index.ts';
import { chainOrder, publicUrl } from './chain.ts';
import { ProviderEndpoint } from './client.ts';
import type { ProviderDeps } from './deps.ts';
import { chatUrl } from './openai.ts';
import { messagesUrl } from './anthropic.ts';
import { serverMessage } from './http.ts';
import { readResponsePrefix } from '../node/response-prefix.ts';

export type CheckState = 'ok' | 'fail' | 'warn' | 'skip';

export interface ProviderCheck {
  check: 'reachable' | 'auth' | 'model' | 'rules' | 'native_tools' | 'structured_output';
  state: CheckState;
  detail: string;
}

export interface ProviderReport {
  provider: string;
  protocol: string;
  url: string;
  model: string;
  primary: boolean;
  checks: ProviderCheck[];
  /** Reachable, key accepted, model present (or a rules file that loads). */
  usable: boolean;
}

export interface DoctorDeps extends Pick<ProviderDeps, 'secrets' | 'clock' | 'ledger' | 'timeouts'> {
  fetch?: typeof fetch;
  /** Each request's bound for a provider claw.runtime.yaml sets no timeout_ms for (default DOCTOR_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A model list should come quickly: the 120 s chat default is for a first token, not for this. */
export const DOCTOR_TIMEOUT_MS = 20_000;
/** What the doctor reads of an answer: a model list or an error fits many times over; the rest is not downloaded. */
export const ANSWER_CAP_BYTES = 1024 * 1024;

interface Bound {
  ms: number;
  /** The claw.runtime.yaml key that changes it, as the failure line says. */
  key: 'timeout_ms' | 'attempt_deadline_ms';
  provider: string;
}

/**
 * One doctor request's bound, headers and body together: the provider's `timeout_ms` when set (a board
 * given five seconds wants to hear sooner, one given five minutes wants the probe to wait as long), else
 * DOCTOR_TIMEOUT_MS; never past its `attempt_deadline_ms`.
 */
export function doctorBound(d: Pick<DoctorDeps, 'timeouts' | 'timeoutMs'>, provider: string): Bound {
  const own = d.timeouts?.[provider];
  const ms = own?.timeoutMs ?? d.timeoutMs ?? DOCTOR_TIMEOUT_MS;
  const deadline = own?.attemptDeadlineMs;
  return deadline !== undefined && deadline < ms ? { ms: deadline, key: 'attempt_deadline_ms', provider } : { ms, key: 'timeout_ms', provider };
}

const PROBE_TOOL = { name: 'ping', description: 'Answers pong. Call it when asked to ping.', input_schema: { type: 'object', properties: {}, additionalProperties: false } };
const PROBE_SCHEMA = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };

export async function checkProviders(m: ResolvedManifest, d: DoctorDeps, o: { probe?: boolean } = {}): Promise<ProviderReport[]> {
  const primary = m.providers[0];
  if (!primary) return [];
  const out: ProviderReport[] = [];
  for (const e of chainOrder(m, primary)) {
    if (!('p' in e)) {
      out.push({ provider: e.ref, protocol: '?', url: '', model: '', primary: false, usable: false, checks: [{ check: 'reachable', state: 'fail', detail: `fallback ${e.ref}: ${e.why}` }] });
      continue;
    }
    out.push(await checkOne(m, e.p.name, e.p.spec as ProviderSpec, e.p === primary, new ProviderEndpoint(e.p, { ...d, manifest: m } as ProviderDeps), d, o.probe === true));
  }
  return out;
}

async function checkOne(m: ResolvedManifest, name: string, spec: ProviderSpec, isPrimary: boolean, ep: ProviderEndpoint, d: DoctorDeps, probe: boolean): Promise<ProviderReport> {
  const r: ProviderReport = { provider: name, protocol: spec.protocol, url: publicUrl(spec.endpoint), model: spec.model, primary: isPrimary, checks: [], usable: false };
  const add = (check: ProviderCheck['check'], state: CheckState, detail: string) => void r.checks.push({ check, state, detail });
  if (spec.protocol === 'custom') {
    try {
      await ep.prepare();
      add('rules', 'ok', 'the rules file loads (offline rules, not a model)');
      r.usable = true;
    } catch (e) {
      add('rules', 'fail', (e as Error).message);
    }
    return r;
  }
  let headers: Record<string, string>;
  try {
    headers = await ep.authHeaders();
  } catch (e) {
    add('auth', 'fail', (e as Error).message);
    return r;
  }
  const bound = doctorBound(d, name);
  const get = (url: string) => request(d, url, { method: 'GET', headers }, bound);
  const anthropic = spec.protocol === 'anthropic-native';
  const base = spec.endpoint.replace(/\/+$/, '');
  const modelsUrl = anthropic ? messagesUrl(base).replace(/\/messages$/, '/models') : `${base.replace(/\/chat\/completions$/, '')}/models`;
  const listed = await get(modelsUrl);
  if (listed.error) {
    add('reachable', 'fail', `${publicUrl(modelsUrl)}: ${listed.error}`);
    return r;
  }
  add('reachable', 'ok', `${publicUrl(modelsUrl)} answered HTTP ${listed.status}`);
  if (listed.status === 401 || listed.status === 403) {
    add('auth', 'fail', `HTTP ${listed.status}: the key was refused (auth ${spec.auth.type}${spec.auth.secret_ref ? `, secret_ref ${spec.auth.secret_ref}` : ''})`);
    return r;
  }
  add('auth', 'ok', spec.auth.type === 'none' ? 'no key needed' : 'the key was accepted');
  let names = modelNames(listed.json);
  let source = publicUrl(modelsUrl);
  if (listed.status !== 200 || names === undefined) {
    // Ollama lists its models at /api/tags; an endpoint without /v1 also lands here.
    const origin = new URL(spec.endpoint).origin;
    const tags = await get(`${origin}/api/tags`);
    const tagNames = tags.status === 200 && Array.isArray(tags.json?.models) ? (tags.json.models as { name?: unknown }[]).map((x) => String(x.name)) : undefined;
    if (tagNames) {
      names = tagNames;
      source = `${origin}/api/tags`;
      if (!anthropic && !/\/v1$/.test(base)) add('reachable', 'warn', `this is an Ollama server: the endpoint should be ${origin}/v1 (its OpenAI-compatible API)`);
    }
  }
  if (names === undefined) {
    add('model', 'warn', `the server lists no models (HTTP ${listed.status}${listed.said ? `: ${listed.said}` : ''}); cannot check ${spec.model}`);
    r.usable = true;
  } else if (names.includes(spec.model) || (!spec.model.includes(':') && names.includes(`${spec.model}:latest`))) {
    add('model', 'ok', `${spec.model} is listed by ${source}`);
    r.usable = true;
  } else {
    const ollama = source.endsWith('/api/tags') || (await get(`${new URL(spec.endpoint).origin}/api/tags`)).status === 200;
    const hint = ollama ? ` — run: ollama pull ${spec.model}` : '';
    add('model', 'fail', `${spec.model} is not among the ${names.length} models listed by ${source}${names.length ? ` (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''})` : ''}${hint}`);
  }
  if (probe && r.usable) await probeModes(d, spec, headers, add, bound);
  else if (probe) {
    add('native_tools', 'skip', 'not probed: the provider is not usable');
    add('structured_output', 'skip', 'not probed: the provider is not usable');
  }
  return r;
}

/** One tiny request per capability; a 400/422/501 is "not supported", as the endpoint's mode fallback reads it. */
async function probeModes(d: DoctorDeps, spec: ProviderSpec, headers: Record<string, string>, add: (c: ProviderCheck['check'], s: CheckState, detail: string) => void, bound: Bound): Promise<void> {
  const anthropic = spec.protocol === 'anthropic-native';
  const url = anthropic ? messagesUrl(spec.endpoint) : chatUrl(spec.endpoint);
  const ask = (text: string, extra: Record<string, unknown>) =>
    request(d, url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ model: spec.model, max_tokens: 32, messages: [{ role: 'user', content: text }], ...(anthropic ? {} : { stream: false }), ...extra }),
    }, bound);
  const tools = anthropic
    ? { tools: [{ name: PROBE_TOOL.name, description: PROBE_TOOL.description, input_schema: PROBE_TOOL.input_schema }] }
    : { tools: [{ type: 'function', function: { name: PROBE_TOOL.name, description: PROBE_TOOL.description, parameters: PROBE_TOOL.input_schema } }] };
  const t = await ask('Please ping.', tools);
  if (t.error) add('native_tools', 'warn', `the probe failed: ${t.error}`);
  else if (t.status === 200) {
    const called = anthropic ? (t.json?.content ?? []).some((b: any) => b?.type === 'tool_use') : Array.isArray(t.json?.choices?.[0]?.message?.tool_calls);
    add('native_tools', 'ok', `supported${called ? ' (the model called the probe tool)' : ' (accepted; the model answered in text this time)'}: output mode native`);
  } else add('native_tools', 'fail', `not supported (HTTP ${t.status}${t.said ? `: ${t.said}` : ''}): the agent falls back to ${anthropic ? 'prompt' : 'json_schema'} mode`);
  if (anthropic) {
    add('structured_output', 'skip', 'the Messages API has no schema-constrained output: prompt mode is the fallback');
    return;
  }
  const s = await ask('Reply with ok true.', { response_format: { type: 'json_schema', json_schema: { name: 'probe', strict: false, schema: PROBE_SCHEMA } } });
  if (s.error) add('structured_output', 'warn', `the probe failed: ${s.error}`);
  else if (s.status === 200) {
    const text = s.json?.choices?.[0]?.message?.content;
    let follows = false;
    try {
      follows = typeof JSON.parse(String(text))?.ok === 'boolean';
    } catch {
      follows = false;
    }
    add('structured_output', follows ? 'ok' : 'warn', follows ? 'supported (the answer followed the schema): output mode json_schema' : 'accepted, but the answer did not follow the schema: prefer native or prompt mode');
  } else add('structured_output', 'fail', `not supported (HTTP ${s.status}${s.said ? `: ${s.said}` : ''}): prompt mode is the fallback`);
}

function modelNames(j: any): string[] | undefined {
  if (!Array.isArray(j?.data)) return undefined;
  return (j.data as { id?: unknown }[]).map((x) => String(x.id));
}

interface Answer {
  status?: number;
  json?: any;
  said?: string;
  error?: string;
}

async function request(d: DoctorDeps, url: string, init: RequestInit, bound: Bound): Promise<Answer> {
  const ctl = new AbortController();
  const timer = d.clock.setTimeout(() => ctl.abort(), bound.ms);
  try {
    // Never follow a redirect: a key header must not travel to another origin (docs/providers.md).
    const res = await (d.fetch ?? fetch)(url, { ...init, signal: ctl.signal, redirect: 'manual' });
    const text = new TextDecoder().decode((await readResponsePrefix(res, ANSWER_CAP_BYTES)).bytes);
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const said = res.status >= 400 ? serverMessage(typeof json?.error === 'string' ? json.error : json?.error?.message ?? json?.message ?? (json === undefined ? text : undefined), res.status) : undefined;
    return { status: res.status, json, ...(said ? { said } : {}) };
  } catch (e) {
    if (ctl.signal.aborted) return { error: `no answer within ${bound.ms} ms (claw.runtime.yaml providers.${bound.provider}.${bound.key} changes it)` };
    const x = e as { cause?: { code?: unknown }; code?: unknown; name?: string };
    const code = x?.cause?.code ?? x?.code;
    return { error: `cannot reach the endpoint (${typeof code === 'string' ? code : (x?.name ?? 'error')})` };
  } finally {
    timer.cancel();
  }
}

/** The report as text: one block per provider, a line per check. */
export function providerDoctorReport(reports: readonly ProviderReport[]): string {
  const mark: Record<CheckState, string> = { ok: 'ok  ', fail: 'FAIL', warn: 'warn', skip: 'skip' };
  const lines: string[] = ['Providers (in fallback order):'];
  for (const r of reports) {
    lines.push(`  ${r.provider}${r.primary ? ' (primary)' : ''}: ${r.protocol} ${r.url} model ${r.model} — ${r.usable ? 'usable' : 'NOT usable'}`);
    for (const c of r.checks) lines.push(`    ${mark[c.state]} ${c.check}: ${c.detail}`);
  }
  return `${lines.join('\n')}\n`;
}
