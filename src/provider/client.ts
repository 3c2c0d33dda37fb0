// One provider: limits checked, auth resolved, the request sent with retries (runtime profile §5),
// usage charged to the ledger. The fallback chain (chain.ts) sits above it.
import type { ChatMessage, ProviderRequest, ToolDefinition } from '../kernel/ports.ts';
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { ProviderSpec } from '../manifest/schema/index.ts';
import { anthropicBody, anthropicStream, messagesUrl, parseAnthropic, ANTHROPIC_VERSION } from './anthropic.ts';
import type { Completion } from './completion.ts';
import { attemptLimits, type ProviderDeps } from './deps.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { postJson, readText, startAttempt } from './http.ts';
import { plan } from './limits.ts';
import { charge, withRetries } from './attempts.ts';
import { chatUrl, openaiBody, openaiStream, parseOpenai } from './openai.ts';
import { answer, compileRules, rulesPath, type Rules } from './rules.ts';
import { SseParser } from '../protocol/sse.ts';
import { estimateText } from './tokens.ts';
import { readBounded } from '../node/fs-reader.ts';
import { isInside, joinPath } from '../manifest/reader.ts';
import { ClawError } from '../protocol/errors.ts';
import { modesFor, type FemtoClawContract, type ModelRequest, type ModelResponse, type OutputMode } from './output-mode.ts';

// One streamed event (a completion chunk) larger than this is not a stream we buffer.
const MAX_SSE_EVENT_BYTES = 4 * 1024 * 1024;
const MODE_WHAT: Record<OutputMode, string> = { native: 'native tool calling', json_schema: 'structured output (response_format json_schema)', prompt: 'the request' };

/** A 400/422/501 to a request that carried this mode's addition is read as "not supported here". */
function refusesMode(e: unknown, mode: OutputMode, sentTools: boolean): boolean {
  if (!(e instanceof ProviderFailure) || e.reason !== 'http' || (e.status !== 400 && e.status !== 422 && e.status !== 501)) return false;
  return mode === 'json_schema' || (mode === 'native' && sentTools);
}

/**
 * The conversation in a mode's shape: the system prompt of that mode, and — outside native mode —
 * native tool-call turns as the FemtoClaw text they stand for, their results as plain tool turns
 * (sent as user turns). In native mode an assistant turn with a native call goes back as the call
 * alone: its text is the runtime's rendering of the call, not something the model wrote.
 */
function messagesFor(messages: ChatMessage[], mode: OutputMode, c: FemtoClawContract): ChatMessage[] {
  let system = false;
  return messages.map((m) => {
    if (m.role === 'system' && !system) {
      system = true;
      return { role: 'system', content: c.system(mode) };
    }
    if (mode === 'native') return m.role === 'assistant' && m.toolCall?.id ? { ...m, content: '' } : m;
    if (m.role === 'assistant' && m.toolCall) return { role: 'assistant', content: m.content };
    if (m.role === 'tool' && m.toolCallId) return { role: 'tool', content: m.content };
    return m;
  });
}

export class ProviderEndpoint {
  private rules?: Promise<Rules>;
  readonly name: string;
  readonly spec: ProviderSpec;

  constructor(
    private readonly p: ResolvedPrimitive,
    private readonly deps: ProviderDeps,
  ) {
    this.name = p.name;
    this.spec = p.spec as ProviderSpec;
  }

  /** Start-up check without sending anything: the rules file compiles, the secret resolves. Throws a ProviderFailure. */
  async prepare(): Promise<void> {
    if (this.spec.protocol === 'custom') await this.loadRules();
    else await this.authHeaders();
  }

  /** The mode this endpoint settled on after its server refused an earlier one; kept for the session. */
  private settled?: OutputMode;
  /** Requests sent by this endpoint, so a display can tell one answer's stream from the next. */
  private sent = 0;

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const done = (c: Completion, mode?: OutputMode): ModelResponse => ({ ...c, provider: this.name, model: this.spec.model, ...(mode ? { mode } : {}) });
    const contract = req.femtoclaw;
    if (this.spec.protocol === 'custom') {
      // Offline rules cost no tokens: limits do not apply (docs/providers.md). They answer in the prompt form.
      const text = answer(await this.loadRules(), req.messages);
      req.onDelta?.(text, { provider: this.name, attempt: 1 });
      return done({ text, toolCallCount: 0 }, contract ? 'prompt' : undefined);
    }
    if (!contract) return done(await this.send(req, req.messages, req.tools));
    const modes = modesFor(this.spec.protocol, contract.settings?.[this.name], contract.native);
    const notices: string[] = [];
    for (let i = this.settled ? Math.max(0, modes.indexOf(this.settled)) : 0; ; i++) {
      const mode = modes[i]!;
      const tools = mode === 'native' && req.tools?.length ? req.tools : undefined;
      try {
        const c = await this.send(req, messagesFor(req.messages, mode, contract), tools, mode === 'json_schema' ? contract.schema : undefined, mode);
        if (notices.length > 0) this.settled = mode;
        return { ...done(c, mode), ...(notices.length > 0 ? { notices } : {}) };
      } catch (e) {
        // A server that refuses what this mode adds (tools, response_format) gets the next mode; the
        // answer is validated the same way in every mode, so this never lowers what is accepted.
        const next = modes[i + 1];
        if (!next || req.signal.aborted || !refusesMode(e, mode, tools !== undefined)) throw e;
        const f = e as ProviderFailure;
        const said = typeof f.detail?.server_message === 'string' ? `: ${f.detail.server_message}` : '';
        notices.push(`provider ${this.name} refused ${MODE_WHAT[mode]} (HTTP ${f.status}${said}); using ${next} mode for this session`);
        this.deps.log?.warn('provider refused output mode', { provider: this.name, mode, next, status: f.status });
      }
    }
  }

  /** One request (with its retries) in one shape: tools for native mode, a schema for json_schema mode. */
  private async send(req: ProviderRequest, messages: ChatMessage[], tools: ToolDefinition[] | undefined, schema?: Record<string, unknown>, mode?: OutputMode): Promise<Completion> {
    const d = this.deps;
    const pl = await plan(this.name, this.spec.limits, messages, tools, d.ledger);
    if (pl.dropped) d.log?.debug('provider context trimmed', { provider: this.name, dropped: pl.dropped, estimate: pl.estimate });
    const headers = await this.authHeaders();
    const stream = this.spec.streaming === true;
    const anthropic = this.spec.protocol === 'anthropic-native';
    const shape = { model: this.spec.model, messages: pl.messages, tools, maxTokens: pl.maxTokens, stream, schema };
    const url = anthropic ? messagesUrl(this.spec.endpoint) : chatUrl(this.spec.endpoint);
    const body = anthropic ? anthropicBody(shape) : openaiBody(shape);
    const request = ++this.sent;
    return withRetries(d, { name: this.name, spec: this.spec, signal: req.signal }, async (attempt) => {
      const started = d.clock.monotonic();
      const c = await this.once(url, headers, body, stream, anthropic, req, attempt, mode, request);
      d.telemetry?.latency('provider.complete', d.clock.monotonic() - started);
      await charge(d, this.name, usedTokens(c, pl.estimate));
      return c;
    });
  }

  private async once(url: string, headers: Record<string, string>, body: unknown, stream: boolean, anthropic: boolean, req: ProviderRequest, attempt: number, mode?: OutputMode, request?: number): Promise<Completion> {
    const d = this.deps;
    const at = startAttempt(req.signal, attemptLimits(d, this.name), d.clock);
    const io = { name: this.name, caller: req.signal, attempt: at };
    try {
      const res = await postJson({ ...io, url, headers, body, fetch: d.fetch ?? fetch, now: () => d.clock.now() });
      // A server that ignores `stream: true` answers with one JSON body: read it as such.
      if (stream && !/application\/json/i.test(res.headers.get('content-type') ?? '')) {
        const onText = (t: string) => {
          try {
            // `mode` tells a display whether the text is the answer itself (native) or JSON still to validate.
            const from = { provider: this.name, attempt, mode, request };
            req.onDelta?.(t, from);
          } catch (e) {
            // A display's bug must not turn into a provider failure (and a fallback).
            d.log?.warn('onDelta callback threw', { provider: this.name, error: (e as Error)?.message });
          }
        };
        const dec = anthropic ? anthropicStream(onText) : openaiStream(onText);
        const sse = new SseParser(MAX_SSE_EVENT_BYTES);
        // Progress is event data, whole or in part; comments (`: ping`), blank lines, other fields, the
        // Messages API's `ping` events (keep-alives by its streaming docs) and events the decoder found empty
        // (`advanced` unmoved: an empty delta) are not.
        let seen = 0;
        let pings = 0;
        // Only growth counts: an empty event that came in pieces was progress while it trickled, and its
        // whole length is discounted when it completes.
        const progress = () => {
          const now = sse.dataChars - pings;
          if (now <= seen) return false;
          seen = now;
          return true;
        };
        const onSse = (t: string) => {
          try {
            for (const ev of sse.push(t)) {
              const before = dec.advanced;
              dec.event(ev);
              // Data lines' characters, as dataChars counts them (the "\n" joining lines is not counted).
              if (ev.event === 'ping' || (before !== undefined && dec.advanced === before)) pings += ev.data.length - ev.data.split('\n').length + 1;
            }
          } catch (e) {
            throw e instanceof ProviderFailure ? e : malformed((e as Error).message, e);
          }
          return dec.done;
        };
        await readText(res, io, onSse, undefined, progress);
        return dec.finish();
      }
      let text = '';
      await readText(res, io, (t) => void (text += t));
      return anthropic ? parseAnthropic(text) : parseOpenai(text);
    } finally {
      at.done();
    }
  }

  /**
   * Spec §5.2 auth types. oauth2: secret_ref holds an access token, sent as a bearer token (no flow is run).
   * Public for the embeddings client (embeddings.ts), which authenticates the same way.
   */
  async authHeaders(): Promise<Record<string, string>> {
    const a = this.spec.auth;
    const h: Record<string, string> = this.spec.protocol === 'anthropic-native' ? { 'anthropic-version': ANTHROPIC_VERSION } : {};
    if (a.type === 'none') return h;
    let secret: string;
    try {
      secret = await this.deps.secrets.resolve(a.secret_ref ?? '');
    } catch (e) {
      // SecretResolver's message names the ref, never a value (runtime profile §7).
      throw new ProviderFailure('secret', `${this.name}: ${(e as Error).message}`, { cause: e });
    }
    if (a.type === 'api-key-header') h[this.spec.protocol === 'anthropic-native' ? 'x-api-key' : 'api-key'] = secret;
    else h.authorization = `Bearer ${secret}`;
    return h;
  }

  private loadRules(): Promise<Rules> {
    return (this.rules ??= (async () => {
      // A manifest sent over the wire names its rules file under its file root, like every file it names
      // (docs/manifest.md "Manifests sent over the wire"); the read is the loader's (regular files, capped).
      const root = this.deps.manifest?.fileRoot;
      const declared = rulesPath(this.spec.endpoint, this.p.origin.file);
      const file = root === undefined ? declared : joinPath(root, declared);
      const read = this.deps.readFile ?? (async (f: string) => readBounded(f, root === undefined ? {} : { within: root }));
      let bytes: Uint8Array;
      try {
        if (root !== undefined && !isInside(file, root)) throw new ClawError('outside', `${declared} is outside ${root}`);
        bytes = await read(file);
      } catch (e) {
        throw new ProviderFailure('config', `custom provider: cannot read rules file ${file} (${(e as { code?: string }).code ?? 'error'})`, { cause: e });
      }
      return compileRules(file, bytes);
    })().catch((e) => {
      this.rules = undefined; // a fixed file is picked up on the next request
      throw e;
    }));
  }
}

/** Real usage when the API reported it; otherwise the estimate, so a budget still holds. */
function usedTokens(c: Completion, inputEstimate: number): number {
  return c.usage
    ? c.usage.input_tokens + c.usage.output_tokens
    : inputEstimate + estimateText(c.text) + (c.toolCall ? estimateText(c.toolCall.name) + estimateText(c.toolCall.arguments) : 0);
}
