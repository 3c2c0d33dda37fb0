// The loader's output: every reference followed, every inline primitive named, defaults applied.
// Specs are typed loosely here (Record) on purpose: the valibot schemas in ./schema are the source
// of truth for shapes, and consumers narrow with the inferred types exported there.
import type { PrimitiveKind, SchemaGeneration } from './kinds.ts';

/** Where a primitive came from, so cross-checks can point at the right file and path. */
export interface Origin {
  /** File holding the primitive document, or the manifest file for inline ones. */
  file: string;
  /** JSON path of the primitive's `spec` inside that file, as segments. */
  specPath: (string | number)[];
}

export interface ResolvedPrimitive<S = Record<string, any>> {
  kind: PrimitiveKind;
  /** metadata.name — explicit, or generated per runtime profile §2. */
  name: string;
  /** metadata.version — explicit, or inherited from the Claw manifest (spec §6.1). */
  version?: string;
  labels: Record<string, string>;
  annotations: Record<string, unknown>;
  spec: S;
  origin: Origin;
}

export interface ResolvedManifest {
  generation: SchemaGeneration;
  /** The `claw` field as written (e.g. "0.3.0"). */
  claw: string;
  /** Root manifest file path, or `<initialize>` when the manifest came over the wire. */
  file: string;
  name: string;
  version?: string;
  description?: string;
  labels: Record<string, string>;
  annotations: Record<string, unknown>;
  identity: ResolvedPrimitive;
  providers: ResolvedPrimitive[];
  channels: ResolvedPrimitive[];
  tools: ResolvedPrimitive[];
  skills: ResolvedPrimitive[];
  memory?: ResolvedPrimitive;
  worldModels: ResolvedPrimitive[];
  sandbox?: ResolvedPrimitive;
  policies: ResolvedPrimitive[];
  swarm?: ResolvedPrimitive;
  telemetry?: ResolvedPrimitive;
  /**
   * The root document as read from `file`, as JSON (loader.ts documentKey), set only when every primitive is inline in it: such
   * a document validates the same wherever it is loaded from (nothing is resolved against its directory), so a
   * byte-for-byte identical manifest sent in claw.initialize needs no second validation (docs/protocol.md).
   */
  sourceKey?: string;
  /**
   * Set for a manifest that came over the wire: the directory every file it names must stay inside (the files
   * read later too, such as Identity context_files). docs/manifest.md "Manifests sent over the wire".
   */
  fileRoot?: string;
}
