// Manifest loading (spec §6, §6.1, §7; runtime profile §1–§2): parse, follow every reference,
// name inline primitives, validate each document against its generation's schema, apply defaults,
// cross-check. Every issue of a run is collected; nothing stops at the first one.
import { documentSchema, specSchema } from './schema/index.ts';
import { kindExistsIn, PRIMITIVE_KINDS, SPEC_SECTION, URI_KIND, type DocumentKind, type PrimitiveKind, type SchemaGeneration } from './kinds.ts';
import { formatPath, type ManifestIssue, type PathSegment, type RawIssue } from './issues.ts';
import { parseSource, type ParsedSource } from './source.ts';
import { unreadable } from './unreadable.ts';
import { schemaIssues } from './schema-issues.ts';
import { generationOf } from './generation.ts';
import { SLOTS, type Slot } from './slots.ts';
import { expandGlob, GlobTooWide, isGlob } from './glob.ts';
import { dirnameOf, isInside, joinPath, type SourceReader } from './reader.ts';
import { isClawUri, parseClawUri } from './uri.ts';
import { applyDefaults } from './defaults.ts';
import { crossCheck } from './crosscheck.ts';
import { resolveRegistryUri, type RegistryConfig } from './registry.ts';
import type { ResolvedManifest, ResolvedPrimitive } from './resolved.ts';

export interface LoadOptions {
  reader: SourceReader;
  registries?: RegistryConfig[];
  /**
   * File references must stay inside this directory, symlinks followed: set for a manifest that came over the
   * wire, whose references are untrusted (docs/manifest.md "Manifests sent over the wire").
   */
  within?: string;
}

export interface LoadResult {
  manifest?: ResolvedManifest;
  issues: ManifestIssue[];
}

const KEBAB = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}$/;
/**
 * `{ [key]: value }`, or nothing when the value is undefined: a resolved manifest has no member whose value is
 * undefined, so a JSON copy of it is the same value.
 */
const present = <K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } => (value === undefined ? {} : ({ [key]: value } as { [k in K]?: V }));
const isObject = (x: unknown): x is Record<string, any> => typeof x === 'object' && x !== null && !Array.isArray(x);

class Load {
  private readonly sources = new Map<string, ParsedSource>();
  private readonly raw: (RawIssue & { pos?: { line: number; col: number } })[] = [];

  constructor(private readonly opts: LoadOptions) {}

  issue(file: string, segments: PathSegment[], message: string, rule: string, section?: string): void {
    this.raw.push({ file, segments, message, rule, section });
  }

  finish(manifest?: ResolvedManifest): LoadResult {
    const issues: ManifestIssue[] = this.raw.map((r) => ({
      file: r.file,
      pos: r.pos ?? this.sources.get(r.file)?.locate(r.segments),
      path: formatPath(r.segments),
      message: r.message,
      section: r.section,
      rule: r.rule,
    }));
    // Group by file (in the order files were first reported), then by position: reads like a compiler.
    const fileOrder = new Map<string, number>();
    for (const i of issues) if (!fileOrder.has(i.file)) fileOrder.set(i.file, fileOrder.size);
    const key = (i: ManifestIssue) => [fileOrder.get(i.file)!, i.pos?.line ?? 0, i.pos?.col ?? 0];
    issues.sort((x, y) => {
      const a = key(x);
      const b = key(y);
      return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
    });
    return issues.length > 0 ? { issues } : { manifest, issues };
  }

  /** Read and parse a file; reports and returns undefined when it can't. `from` says who referenced it. */
  async readSource(path: string, from?: { file: string; segments: PathSegment[] }): Promise<ParsedSource | undefined> {
    const cached = this.sources.get(path);
    if (cached) return cached;
    let bytes: Uint8Array;
    try {
      bytes = await this.opts.reader.read(path, this.opts.within === undefined ? undefined : { within: this.opts.within });
    } catch (e) {
      const { why, rule } = unreadable((e as { code?: string }).code, this.opts.within);
      if (from) this.issue(from.file, from.segments, `referenced file ${path} ${why}`, rule, '§6');
      else this.issue(path, [], `file ${why}`, rule, '§6');
      return undefined;
    }
    const r = parseSource(path, bytes);
    if (!r.ok) {
      this.raw.push(r.issue);
      return undefined;
    }
    this.sources.set(path, r.source);
    return r.source;
  }

  /** Validate a whole document of an expected kind (or any kind when undefined). */
  checkDocument(src: ParsedSource, expected?: PrimitiveKind | 'Claw'): { gen: SchemaGeneration; kind: DocumentKind; ok: boolean } | undefined {
    const doc = src.value;
    if (!isObject(doc)) {
      this.issue(src.file, [], 'expected a CKP document (a mapping with claw, kind, metadata, spec)', 'not-a-document', '§6');
      return undefined;
    }
    const kind = doc.kind;
    const known = kind === 'Claw' || PRIMITIVE_KINDS.includes(kind);
    if (!known) {
      this.issue(src.file, ['kind'], `unknown kind ${JSON.stringify(kind)}: expected ${expected ?? 'Claw or a primitive kind'}`, 'kind', '§5');
      return undefined;
    }
    if (expected && kind !== expected) {
      this.issue(src.file, ['kind'], `this slot takes a ${expected}, but the file declares kind ${kind}`, 'kind-mismatch', '§6');
      return undefined;
    }
    const g = generationOf(doc.claw);
    if (!g.ok) {
      this.issue(src.file, ['claw'], g.message, 'version', '§1.5');
      return undefined;
    }
    if (kind === 'WorldModel' && g.gen === '0.2') {
      this.issue(src.file, ['kind'], 'WorldModel exists from CKP 0.3.0 on; declare claw: "0.3.0"', 'kind', '§5.7');
      return undefined;
    }
    let issues = schemaIssues(documentSchema(g.gen, kind), doc, { file: src.file, prefix: [], section: SPEC_SECTION[kind as DocumentKind] });
    // Inline primitives inside a Claw are validated on their own against their kind's full schema
    // (stricter than the root schema's sketch of them), so the root's view of them would repeat it.
    if (kind === 'Claw') issues = issues.filter((i) => !i.segments.includes('inline'));
    this.raw.push(...issues);
    return { gen: g.gen, kind, ok: issues.length === 0 };
  }

  async root(src: ParsedSource, baseDir: string, defaultClaw?: string): Promise<ResolvedManifest | undefined> {
    const doc = src.value;
    if (isObject(doc) && doc.claw === undefined && defaultClaw) doc.claw = defaultClaw;
    const checked = this.checkDocument(src, 'Claw');
    if (!checked || !isObject(doc) || !isObject(doc.spec) || !isObject(doc.metadata)) return undefined;
    const { gen } = checked;
    const meta = doc.metadata;
    const manifestName = typeof meta.name === 'string' ? meta.name : 'claw';
    const version = typeof meta.version === 'string' ? meta.version : undefined;
    const m: ResolvedManifest = {
      generation: gen,
      claw: doc.claw,
      file: src.file,
      name: manifestName,
      ...present('version', version),
      ...present('description', typeof meta.description === 'string' ? meta.description : undefined),
      labels: isObject(meta.labels) ? meta.labels : {},
      annotations: isObject(meta.annotations) ? meta.annotations : {},
      identity: undefined as unknown as ResolvedPrimitive,
      providers: [],
      channels: [],
      tools: [],
      skills: [],
      worldModels: [],
      policies: [],
      ...present('fileRoot', this.opts.within),
    };
    for (const slot of SLOTS) {
      const value = doc.spec[slot.key];
      // A slot of a kind this generation lacks (world_models in 0.2) is already an unknown field.
      if (value === undefined || !kindExistsIn(slot.kind, gen)) continue;
      const entries: unknown[] = slot.many ? (Array.isArray(value) ? value : []) : [value];
      const found: ResolvedPrimitive[] = [];
      for (let i = 0; i < entries.length; i++) {
        const at: PathSegment[] = slot.many ? ['spec', slot.key, i] : ['spec', slot.key];
        found.push(...(await this.entry(slot, entries[i], { src, baseDir, gen, at, index: i, manifestName, version })));
      }
      if (slot.many) (m as any)[slot.field] = found;
      else if (found[0]) (m as any)[slot.field] = found[0];
    }
    // A missing or unreadable identity is already reported; cross-checks still run on the rest.
    const complete = m.identity !== undefined;
    if (!complete) m.identity = { kind: 'Identity', name: manifestName, labels: {}, annotations: {}, spec: {}, origin: { file: src.file, specPath: ['spec', 'identity'] } };
    this.checkCollisions(m);
    applyDefaults(m);
    this.raw.push(...crossCheck(m));
    return complete ? m : undefined;
  }

  private async entry(
    slot: Slot,
    entry: unknown,
    c: { src: ParsedSource; baseDir: string; gen: SchemaGeneration; at: PathSegment[]; index: number; manifestName: string; version?: string },
  ): Promise<ResolvedPrimitive[]> {
    const section = SPEC_SECTION[slot.kind];
    if (isObject(entry)) {
      if (!isObject(entry.inline)) {
        this.issue(c.src.file, c.at, `an inline ${slot.kind} goes under "inline:" (spec §6.1)`, 'inline', '§6.1');
        return [];
      }
      const { name: explicit, ...spec } = entry.inline;
      const at = [...c.at, 'inline'];
      let name: string;
      if (explicit !== undefined) {
        if (typeof explicit !== 'string' || !KEBAB.test(explicit)) {
          this.issue(c.src.file, [...at, 'name'], 'name must be 1-63 letters, digits or hyphens, starting with a letter or digit', 'name', '§7');
          return [];
        }
        name = explicit;
      } else {
        // Runtime profile §2: identity takes the Claw's name; array items (and single slots) `{kind}-{index}`.
        name = slot.kind === 'Identity' ? c.manifestName : `${URI_KIND[slot.kind]}-${c.index}`;
      }
      // Kept even when its spec has issues (already reported): its name still resolves references,
      // so one run reports a broken tool once instead of again at every skill that needs it.
      this.raw.push(...schemaIssues(specSchema(c.gen, slot.kind), spec, { file: c.src.file, prefix: at, section }));
      return [{ kind: slot.kind, name, ...present('version', c.version), labels: {}, annotations: {}, spec, origin: { file: c.src.file, specPath: at } }];
    }
    if (typeof entry !== 'string' || entry === '') return []; // the root schema reports the wrong type
    const from = { file: c.src.file, segments: c.at };
    let files: string[];
    if (isClawUri(entry)) {
      const parsed = parseClawUri(entry);
      if (!parsed.ok) {
        this.issue(c.src.file, c.at, `invalid claw:// URI: ${parsed.reason}`, 'uri', '§7');
        return [];
      }
      if (parsed.uri.form === 'local') {
        this.issue(
          c.src.file,
          c.at,
          `${parsed.uri.canonical} names a primitive declared in this manifest; a ${slot.key} entry needs a file path, a glob, a registry URI or an inline primitive`,
          'uri-local-in-slot',
          '§7',
        );
        return [];
      }
      const got = await resolveRegistryUri(parsed.uri, this.opts);
      if (!got.ok) {
        this.issue(c.src.file, c.at, got.message, 'registry', '§7');
        return [];
      }
      const r = parseSource(got.location, got.bytes);
      if (!r.ok) {
        this.raw.push(r.issue);
        return [];
      }
      this.sources.set(got.location, r.source);
      return this.primitiveFromSource(slot, r.source, c);
    }
    const within = this.opts.within;
    if (within !== undefined && !staysInside(c.baseDir, entry, within)) {
      // Checked before anything is touched: whether such a path exists is not the sender's business either.
      this.issue(c.src.file, c.at, `${JSON.stringify(entry)} points outside ${within}: a manifest sent over the wire may only reference files in that directory`, 'file-outside', '§6');
      return [];
    }
    if (isGlob(entry)) {
      try {
        files = await expandGlob(this.opts.reader, c.baseDir, entry);
      } catch (e) {
        if (!(e instanceof GlobTooWide)) throw e;
        this.issue(c.src.file, c.at, e.message, 'glob-too-wide', '§6');
        return [];
      }
      if (files.length === 0) {
        this.issue(c.src.file, c.at, `glob ${entry} matched no files in ${c.baseDir}`, 'glob-empty', '§6');
        return [];
      }
    } else files = [joinPath(c.baseDir, entry)];
    const out: ResolvedPrimitive[] = [];
    for (const f of files) {
      const src = await this.readSource(f, from);
      if (src) out.push(...this.primitiveFromSource(slot, src, c));
    }
    return out;
  }

  private primitiveFromSource(slot: Slot, src: ParsedSource, c: { gen: SchemaGeneration; version?: string }): ResolvedPrimitive[] {
    const checked = this.checkDocument(src, slot.kind);
    // A document of the right kind with schema issues (reported) still declares its name.
    const doc = src.value as Record<string, any>;
    if (!checked || typeof doc.metadata?.name !== 'string') return [];
    if (checked.gen !== c.gen) {
      this.issue(src.file, ['claw'], `this file is CKP ${checked.gen}.x but the manifest is ${c.gen}.x; use one generation`, 'version-mix', '§1.5');
      return [];
    }
    const meta = doc.metadata as Record<string, any>;
    return [
      {
        kind: slot.kind,
        name: meta.name,
        ...present('version', meta.version ?? c.version), // spec §6.1: inherits the Claw's metadata.version
        labels: meta.labels ?? {},
        annotations: meta.annotations ?? {},
        spec: isObject(doc.spec) ? doc.spec : {},
        origin: { file: src.file, specPath: ['spec'] },
      },
    ];
  }

  /** The rules of one primitive that need no other document (modes, exporter fields, cycles within it). */
  standalone(src: ParsedSource, kind: PrimitiveKind, gen: SchemaGeneration): void {
    const doc = src.value as Record<string, any>;
    const slot = SLOTS.find((s) => s.kind === kind)!;
    const p: ResolvedPrimitive = {
      kind,
      name: typeof doc.metadata?.name === 'string' ? doc.metadata.name : kind.toLowerCase(),
      ...present('version', doc.metadata?.version),
      labels: {},
      annotations: {},
      spec: isObject(doc.spec) ? doc.spec : {},
      origin: { file: src.file, specPath: ['spec'] },
    };
    const m: ResolvedManifest = {
      generation: gen, claw: String(doc.claw), file: src.file, name: p.name, labels: {}, annotations: {},
      identity: p, providers: [], channels: [], tools: [], skills: [], worldModels: [], policies: [],
    };
    (m as any)[slot.field] = slot.many ? [p] : p;
    this.raw.push(...crossCheck(m, { standalone: true }));
  }

  /** Runtime profile §2: two primitives of one kind with one name is an error at INIT. */
  private checkCollisions(m: ResolvedManifest): void {
    for (const slot of SLOTS) {
      if (!slot.many) continue;
      const seen = new Map<string, ResolvedPrimitive>();
      for (const p of m[slot.field] as ResolvedPrimitive[]) {
        const first = seen.get(p.name);
        if (first) {
          const where = first.origin.file === p.origin.file ? formatPath(first.origin.specPath) : first.origin.file;
          this.issue(p.origin.file, p.origin.specPath, `${slot.kind} name "${p.name}" is already used by ${where}`, 'name-collision', '§6.1');
        } else seen.set(p.name, p);
      }
    }
  }
}

/**
 * Whether a path or glob reference, taken from `baseDir`, stays inside `within` as written: no absolute path
 * elsewhere, no `..` climbing out (a glob's `..` segments included). Symlinks are the reader's to check.
 */
function staysInside(baseDir: string, ref: string, within: string): boolean {
  if (!isGlob(ref)) return isInside(joinPath(baseDir, ref), within);
  // A glob is walked segment by segment: each prefix before its first wildcard must stay inside, and a `..` after
  // a wildcard could climb out of wherever it matched, so none is allowed there.
  const segs = ref.split('/');
  const firstWild = segs.findIndex((s) => isGlob(s));
  if (segs.slice(firstWild).includes('..')) return false;
  return isInside(joinPath(baseDir, segs.slice(0, firstWild).join('/') || '.'), within);
}

/** Load a root manifest file (absolute path). */
export async function loadManifestFile(path: string, opts: LoadOptions): Promise<LoadResult> {
  return loadFile(path, opts);
}

async function loadFile(path: string, opts: LoadOptions): Promise<LoadResult> {
  const l = new Load(opts);
  const src = await l.readSource(path);
  if (!src) return l.finish();
  const key = documentKey(src.value); // before root(), which fills in defaults
  const m = await l.root(src, dirnameOf(path));
  if (m && key !== undefined && primitivesOf(m).every((p) => p.origin.file === m.file)) m.sourceKey = key;
  return l.finish(m);
}

/**
 * The document as JSON text (key order as written): equal keys mean equal documents. Not canonical on purpose —
 * a client that re-serialises the file keeps its order, and a differently ordered copy is merely validated
 * again — so the loader needs no canonical serialiser on the start path.
 */
export function documentKey(value: unknown): string | undefined {
  try {
    // A non-finite number (YAML .inf / .nan) would read as null: no key, so such a document is always validated.
    return JSON.stringify(value, (_k, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new Error('not JSON');
      return v;
    });
  } catch {
    return undefined;
  }
}

/** Every primitive of the manifest, slot by slot (slots.ts). */
function primitivesOf(m: ResolvedManifest): ResolvedPrimitive[] {
  return SLOTS.flatMap((slot) => {
    const v = m[slot.field] as ResolvedPrimitive | ResolvedPrimitive[] | undefined;
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  });
}

/**
 * Load a manifest that arrived as a value (claw.initialize). Relative references resolve against
 * `baseDir`; a missing `claw` field takes `defaultClaw` (the negotiated protocol version), since
 * the spec's own initialize examples omit it.
 */
export async function loadManifestValue(
  value: unknown,
  where: { file: string; baseDir: string; defaultClaw: string },
  opts: LoadOptions,
): Promise<LoadResult> {
  const l = new Load(opts);
  const src: ParsedSource = { file: where.file, value: structuredClone(value), locate: () => undefined };
  const m = await l.root(src, where.baseDir, where.defaultClaw);
  return l.finish(m);
}

/**
 * `claw validate FILE`: a root manifest is loaded whole; a single primitive document is checked
 * against its kind's schema (its references are checked when a manifest includes it).
 */
export async function validateFile(path: string, opts: LoadOptions): Promise<LoadResult & { kind?: DocumentKind }> {
  const l = new Load(opts);
  const src = await l.readSource(path);
  if (!src) return l.finish();
  const kind = isObject(src.value) ? src.value.kind : undefined;
  if (kind === 'Claw') {
    const m = await l.root(src, dirnameOf(path));
    return { ...l.finish(m), kind };
  }
  const checked = l.checkDocument(src);
  if (checked && checked.kind !== 'Claw') l.standalone(src, checked.kind, checked.gen);
  return { ...l.finish(), kind: checked?.kind };
}
