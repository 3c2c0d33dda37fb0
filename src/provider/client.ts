// One provider: limits checked, auth resolved, the request sent with retries (runtime profile §5),
// usage charged to the ledger. The fallback chain (chain.ts) sits above it.
import type { ProviderRequest, ProviderResponse } from '../kernel/ports.ts';
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { ProviderSpec } from '../manifest/schema/index.ts';
import { anthropicBody, anthropicStream, messagesUrl, parseAnthropic, ANTHROPIC_VERSION } from './anthropic.ts';
import type { Completion } from './completion.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderDeps } from './deps.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { postJson, readText, startAttempt } from './http.ts';
import { plan } from './limits.ts';
import { charge, withRetries } from './attempts.ts';
import { chatUrl, openaiBody, openaiStream, parseOpenai } from './openai.ts';
import { answer, compileRules, rulesPath, type Rules } from './rules.ts';
import { SseParser } from './sse.ts';
import { estimateText } from './tokens.ts';
import { readBounded } from '../node/fs-reader.ts';
import { isInside, joinPath } from '../manifest/reader.ts';
import { ClawError } from '../protocol/errors.ts';

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

  async complete(req: ProviderRequest): Promise<ProviderResponse> {
    const done = (c: Completion): ProviderResponse => ({ ...c, provider: this.name, model: this.spec.model });
    if (this.spec.protocol === 'custom') {
      // Offline rules cost no tokens: limits do not apply (docs/providers.md).
      const text = answer(await this.loadRules(), req.messages);
      req.onDelta?.(text, { provider: this.name, attempt: 1 });
      return done({ text, toolCallCount: 0 });
    }
    const d = this.deps;
    const pl = await plan(this.name, this.spec.limits, req.messages, req.tools, d.ledger);
    if (pl.dropped) d.log?.debug('provider context trimmed', { provider: this.name, dropped: pl.dropped, estimate: pl.estimate });
    const headers = await this.authHeaders();
    const stream = this.spec.streaming === true;
    const anthropic = this.spec.protocol === 'anthropic-native';
    const shape = { model: this.spec.model, messages: pl.messages, tools: req.tools, maxTokens: pl.maxTokens, stream };
    const url = anthropic ? messagesUrl(this.spec.endpoint) : chatUrl(this.spec.endpoint);
    const body = anthropic ? anthropicBody(shape) : openaiBody(shape);
    return withRetries(d, { name: this.name, spec: this.spec, signal: req.signal }, async (attempt) => {
      const started = d.clock.monotonic();
      const c = await this.once(url, headers, body, stream, anthropic, req, attempt);
      d.telemetry?.latency('provider.complete', d.clock.monotonic() - started);
      await charge(d, this.name, usedTokens(c, pl.estimate));
      return done(c);
    });
  }

  private async once(url: string, headers: Record<string, string>, body: unknown, stream: boolean, anthropic: boolean, req: ProviderRequest, attempt: number): Promise<Completion> {
    const d = this.deps;
    const timeoutMs = d.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const at = startAttempt(req.signal, timeoutMs, d.clock);
    const io = { name: this.name, caller: req.signal, attempt: at, timeoutMs };
    try {
      const res = await postJson({ ...io, url, headers, body, fetch: d.fetch ?? fetch, now: () => d.clock.now() });
      // A server that ignores `stream: true` answers with one JSON body: read it as such.
      if (stream && !/application\/json/i.test(res.headers.get('content-type') ?? '')) {
        const onText = (t: string) => {
          try {
            req.onDelta?.(t, { provider: this.name, attempt });
          } catch (e) {
            // A display's bug must not turn into a provider failure (and a fallback).
            d.log?.warn('onDelta callback threw', { provider: this.name, error: (e as Error)?.message });
          }
        };
        const dec = anthropic ? anthropicStream(onText) : openaiStream(onText);
        const sse = new SseParser((ev) => dec.event(ev));
        await readText(res, io, (t) => {
          try {
            sse.push(t);
          } catch (e) {
            throw e instanceof ProviderFailure ? e : malformed((e as Error).message, e);
          }
          return dec.done;
        });
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
