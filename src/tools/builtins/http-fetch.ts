// `http-fetch`: { url: string, method?: string, headers?: {[k]: string}, body?: string,
// max_bytes?: integer } → status line and body. Network rules of the sandbox apply (spec §5.8):
// mode, allowed_hosts, SSRF protection with DNS pinning and per-redirect re-checks (src/net). The body is
// held up to `max_bytes`, at most the sandbox's max_output_bytes (byte-cap.ts).
import { SandboxViolation, type ToolResult } from '../types.ts';
import { netMode } from '../../sandbox/spec-view.ts';
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import type { BuiltinDef } from './def.ts';
import { readCap } from './byte-cap.ts';

type Network = NonNullable<NonNullable<SandboxSpec['capabilities']>['network']>;

export interface FetchOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  truncated: boolean;
  finalUrl: string;
}

/** guardedFetch's shape (src/net/guarded-fetch.ts), injected so tests and workers can pick it. */
export type NetworkFetch = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; maxBytes?: number; timeoutMs?: number; signal?: AbortSignal },
  network: Network,
) => Promise<FetchOutcome>;

const DEFAULT_MAX = 1024 * 1024;

export const httpFetch: BuiltinDef = {
  name: 'http-fetch',
  touchesOs: true,
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', minLength: 1 },
      method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: 'string' },
      max_bytes: { type: 'integer', minimum: 1 },
    },
    required: ['url'],
  },
  async run(args, ctx): Promise<ToolResult> {
    if (typeof args.url !== 'string') return { content: [{ type: 'text', text: 'http-fetch needs a "url"' }], isError: true };
    // The sandbox's network mode as every layer reads it (src/sandbox/spec-view.ts netMode).
    const mode = netMode(ctx.sandbox);
    if (mode === 'deny') throw new SandboxViolation('network.mode', 'the sandbox denies network access');
    const network: Network = { ...ctx.sandbox.capabilities?.network, mode };
    const r = await ctx.fetch(
      args.url,
      {
        method: typeof args.method === 'string' ? args.method : 'GET',
        headers: (args.headers as Record<string, string>) ?? undefined,
        body: typeof args.body === 'string' ? args.body : undefined,
        maxBytes: readCap(args.max_bytes, ctx.sandbox, DEFAULT_MAX),
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
      },
      network,
    );
    const type = [r.headers['content-type']].flat()[0] ?? 'unknown type';
    const head = `HTTP ${r.status} ${type} ${r.finalUrl}${r.truncated ? ' (body truncated)' : ''}`;
    const content: ToolResult['content'] = [{ type: 'text', text: head }, { type: 'text', text: r.body }];
    return r.status >= 400 ? { content, isError: true } : { content };
  },
};
