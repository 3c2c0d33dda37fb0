// provider.schema.json `spec` (spec §5.2) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { secretRef } from './definitions.ts';
import { bool, int0, int1, lazySchema, nonEmpty, requiring, str, strict, unit, uri } from './helpers.ts';

export const PROVIDER_PROTOCOLS = ['openai-compatible', 'anthropic-native', 'custom'] as const;
export const AUTH_TYPES = ['bearer', 'api-key-header', 'oauth2', 'none'] as const;
export const BACKOFF = ['exponential', 'linear', 'constant'] as const;
const CAPABILITIES = ['text', 'image', 'audio', 'video', 'realtime'] as const;
type Capability = (typeof CAPABILITIES)[number];

// Built on first use (helpers.ts lazySchema): a start from the manifest cache validates nothing (docs/startup.md).
export const providerSpec = lazySchema(() => {
  // if: { properties: { type: { not: { const: none } } } } then: { required: [type, secret_ref] }
  const auth = requiring(strict({ type: v.picklist(AUTH_TYPES), secret_ref: v.optional(secretRef) }), [
    ['secret_ref', (a) => a.type !== 'none', 'secret_ref is required unless auth type is "none"'],
  ]);

  return strict({
    protocol: v.picklist(PROVIDER_PROTOCOLS),
    endpoint: uri,
    model: nonEmpty,
    auth,
    streaming: v.optional(bool),
    hints: v.optional(
      strict({ cost_priority: v.optional(unit), speed_priority: v.optional(unit), intelligence_priority: v.optional(unit) }),
    ),
    fallback: v.optional(v.array(strict({ provider_ref: str }))),
    limits: v.optional(
      strict({
        tokens_per_day: v.optional(int0),
        tokens_per_request: v.optional(int0),
        requests_per_minute: v.optional(int0),
        max_context_window: v.optional(int0),
      }),
    ),
    retry: v.optional(
      strict({ max_attempts: v.optional(int1), backoff: v.optional(v.picklist(BACKOFF)), initial_delay_ms: v.optional(int0) }),
    ),
    capabilities: v.optional(
      v.pipe(
        v.array(v.picklist(CAPABILITIES)),
        // uniqueItems: true — items are strings, so JSON equality is ===.
        v.check((items: Capability[]) => new Set(items).size === items.length, 'must not contain duplicates'),
      ),
    ),
    transport: v.optional(v.picklist(['http', 'websocket', 'webrtc', 'grpc'])),
  });
});
