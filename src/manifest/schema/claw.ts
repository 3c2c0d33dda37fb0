// claw.schema.json `spec` (spec §6) — the root manifest. 0.3.0 adds `world_models`; otherwise
// identical. The root schema only shapes references: inline primitives (other than identity and
// providers) are bare objects here and are validated with `specSchema` by the loader (§6.1).
import * as v from 'valibot';
import { AUTONOMY } from './identity.ts';
import { AUTH_TYPES, PROVIDER_PROTOCOLS } from './provider.ts';
import { anyObject, bool, isPlainObject, lazySchema, loose, nonEmpty, nonEmptyArray, str, strList, strict, stringMap, uri } from './helpers.ts';

/** Both generations' root schemas, built together the first time either is read (helpers.ts lazySchema). */
let built: ReturnType<typeof build> | undefined;
const specs = () => (built ??= build());

function build() {
  const notRef = v.custom<never>(() => false, 'must be a reference string or an object');

  /**
   * `oneOf: [{ type: string, minLength: 1 }, <object>]` — a path/URI or an `{inline: ...}` object.
   * The branches are disjoint by JSON type, so the input's type picks the branch (same verdict as
   * oneOf) and that branch's issues are reported as-is instead of a vague union issue.
   */
  const refOr = <S extends v.GenericSchema>(object: S) =>
    v.lazy((input) => (typeof input === 'string' ? nonEmpty : isPlainObject(input) ? object : notRef));

  const ref = refOr(anyObject);
  const refs = v.array(ref);

  const inlineIdentity = loose({
    inline: loose({
      personality: nonEmpty,
      context_files: v.optional(stringMap),
      locale: v.optional(str),
      capabilities: v.optional(strList),
      autonomy: v.optional(v.picklist(AUTONOMY)),
    }),
  });

  // claw.schema.json's inline provider is looser than provider.schema.json (unknown keys allowed,
  // secret_ref never required, hints/limits/retry/fallback unshaped): mirrored as-is. The loader's
  // specSchema('Provider') pass applies the full rules.
  const inlineProvider = loose({
    inline: loose({
      name: v.optional(str),
      protocol: v.picklist(PROVIDER_PROTOCOLS),
      endpoint: uri,
      model: nonEmpty,
      auth: loose({ type: v.picklist(AUTH_TYPES), secret_ref: v.optional(str) }),
      streaming: v.optional(bool),
      hints: v.optional(anyObject),
      fallback: v.optional(v.array(v.unknown())),
      limits: v.optional(anyObject),
      retry: v.optional(anyObject),
    }),
  });

  const clawEntries02 = {
    identity: refOr(inlineIdentity),
    providers: nonEmptyArray(refOr(inlineProvider)),
    channels: v.optional(refs),
    tools: v.optional(refs),
    skills: v.optional(refs),
    memory: v.optional(ref),
    sandbox: v.optional(ref),
    policies: v.optional(refs),
    swarm: v.optional(ref),
    telemetry: v.optional(ref),
  };

  return { v02: strict(clawEntries02), v03: strict({ ...clawEntries02, world_models: v.optional(refs) }) };
}

// Built on first use: a start whose launch manifest comes from the manifest cache validates nothing (docs/startup.md).
export const clawSpec02 = lazySchema(() => specs().v02);
export const clawSpec03 = lazySchema(() => specs().v03);
