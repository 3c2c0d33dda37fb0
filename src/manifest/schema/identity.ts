// identity.schema.json `spec` (spec §5.1) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { lazySchema, nonEmpty, str, strList, strict, stringMap } from './helpers.ts';

export const AUTONOMY = ['observer', 'supervised', 'autonomous'] as const;

// Built on first use like the other primitives' schemas (helpers.ts lazySchema): a start whose launch manifest
// comes from the manifest cache validates nothing (docs/startup.md).
export const identitySpec = lazySchema(() =>
  strict({
    personality: nonEmpty,
    context_files: v.optional(stringMap),
    locale: v.optional(str),
    capabilities: v.optional(strList),
    autonomy: v.optional(v.picklist(AUTONOMY)),
  }),
);
