// Differential test: the valibot schemas (src/manifest/schema) must give the same valid/invalid
// verdict as the official CKP JSON Schemas (test/fixtures/schema/official, evaluated with
// @cfworker/json-schema) on every document of a corpus: the spec's examples and test vectors,
// plus mutations generated from each valid one (drop each field, add an unknown field at each
// object level, replace each value with wrong types, wrong enum values, pattern/minimum/maximum
// violations). Any disagreement fails the test and lists the offending mutations.
//
// Deliberate differences, tested separately below: `claw` accepts any patch of the minor
// (0.3.x), and `format: uri` is permissive (scheme + non-space characters).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator, type Schema } from '@cfworker/json-schema';
import * as v from 'valibot';
import { parse, parseAllDocuments } from 'yaml';
import {
  PRIMITIVE_KINDS,
  kindExistsIn,
  type DocumentKind,
  type PrimitiveKind,
  type SchemaGeneration,
} from '../../src/manifest/kinds.ts';
import { documentSchema, specSchema } from '../../src/manifest/schema/index.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Doc = { [k: string]: Json };
type Path = (string | number)[];

const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'schema');
const GENS: SchemaGeneration[] = ['0.2', '0.3'];
const OFFICIAL_VERSION: Record<SchemaGeneration, string> = { '0.2': '0.2.0', '0.3': '0.3.0' };
const DOCUMENT_KINDS: DocumentKind[] = [...PRIMITIVE_KINDS, 'Claw'];
const FILE_OF: Record<DocumentKind, string> = {
  Identity: 'identity',
  Provider: 'provider',
  Channel: 'channel',
  Tool: 'tool',
  Skill: 'skill',
  Memory: 'memory',
  WorldModel: 'world-model',
  Sandbox: 'sandbox',
  Policy: 'policy',
  Swarm: 'swarm',
  Telemetry: 'telemetry',
  Claw: 'claw',
};

// ---- official validators ------------------------------------------------------------------

interface Official {
  doc: Validator;
  spec?: Validator; // `#/properties/spec` of the kind's schema (primitives only)
}

function loadOfficial(gen: SchemaGeneration): Map<DocumentKind, Official> {
  const dir = join(FIXTURES, 'official', OFFICIAL_VERSION[gen]);
  const read = (name: string): Schema => JSON.parse(readFileSync(join(dir, `${name}.schema.json`), 'utf8'));
  const out = new Map<DocumentKind, Official>();
  for (const kind of DOCUMENT_KINDS) {
    if (!kindExistsIn(kind, gen)) continue;
    const schema = read(FILE_OF[kind]);
    const doc = new Validator(schema, '2020-12', false);
    doc.addSchema(read('definitions'));
    let spec: Validator | undefined;
    if (kind !== 'Claw') {
      spec = new Validator({ $ref: `${schema.$id}#/properties/spec` }, '2020-12', false);
      spec.addSchema(schema);
      spec.addSchema(read('definitions'));
    }
    out.set(kind, { doc, spec });
  }
  return out;
}

const OFFICIAL: Record<SchemaGeneration, Map<DocumentKind, Official>> = { '0.2': loadOfficial('0.2'), '0.3': loadOfficial('0.3') };

const officialDoc = (gen: SchemaGeneration, kind: DocumentKind, doc: unknown) => OFFICIAL[gen].get(kind)!.doc.validate(doc).valid;
const officialSpec = (gen: SchemaGeneration, kind: DocumentKind, spec: unknown) =>
  OFFICIAL[gen].get(kind)!.spec!.validate(spec).valid;
const oursDoc = (gen: SchemaGeneration, kind: DocumentKind, doc: unknown) => v.safeParse(documentSchema(gen, kind), doc).success;
const oursSpec = (gen: SchemaGeneration, kind: PrimitiveKind, spec: unknown) => v.safeParse(specSchema(gen, kind), spec).success;

// ---- corpus ----------------------------------------------------------------------------------

function loadYamlDocs(name: string): Doc[] {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  return parseAllDocuments(text).map((d) => d.toJS() as Doc).filter((d) => d && typeof d === 'object');
}

const EXAMPLES_03 = loadYamlDocs('examples-0.3.yaml');
const EXAMPLES_02 = loadYamlDocs('examples-0.2.yaml');
type Vector = { id: string; schema: 'accept' | 'reject'; doc: Doc };
const VECTORS = parse(readFileSync(join(FIXTURES, 'vectors-0.3.yaml'), 'utf8')) as Vector[];

const withVersion = (doc: Doc, claw: string): Doc => ({ ...structuredClone(doc), claw });

/** Base documents for a generation, `claw` pinned to the official const. */
function bases(gen: SchemaGeneration): Doc[] {
  const all = [...EXAMPLES_03, ...EXAMPLES_02, ...VECTORS.map((t) => t.doc)];
  return all.filter((d) => kindExistsIn(d.kind as DocumentKind, gen)).map((d) => withVersion(d, OFFICIAL_VERSION[gen]));
}

// ---- mutations -------------------------------------------------------------------------------

const DELETE = Symbol('delete');
const UNKNOWN_KEY = 'zz_unknown_field';

// Strings cover: empty (minLength), enum miss, kebabName (leading hyphen, 64 chars, space),
// semver (two parts, prefix), durationString, uri (no scheme, bare scheme, relative path),
// plus values that are valid for each pattern so both directions are exercised.
const STRING_VARIANTS: Json[] = [
  '', 'x', 'bogus-value', '-bad', 'a'.repeat(63), 'a'.repeat(64), 'Bad Name', 'ok-name',
  '1.0', 'v1.2.3', '1.2.3', '1.2.3-rc.1', '10x', 'd', '10d', '0s',
  'not a uri', 'x:y', 'mailto:a@b.c', '/relative/path', 'https://h.example/p?q=1', 'http://a b',
  5, null, true, [], {},
];
const NUMBER_VARIANTS: Json[] = [-1, -0.5, 0, 0.5, 1, 1.5, 99, 100, 2.5e9, '5', null, true, []];
const BOOLEAN_VARIANTS: Json[] = ['true', 0, null, {}];
const ARRAY_VARIANTS: Json[] = [[], {}, 'x', [5], [null], ['bogus'], [{}], [[]]];
const OBJECT_VARIANTS: Json[] = [[], [{}], 'x', null, 5, {}];

function variantsOf(value: Json): Json[] {
  if (typeof value === 'string') return STRING_VARIANTS;
  if (typeof value === 'number') return NUMBER_VARIANTS;
  if (typeof value === 'boolean') return [...BOOLEAN_VARIANTS, !value];
  if (Array.isArray(value)) {
    // uniqueItems: duplicate the first item; minItems: drop all but... (covered by []).
    return value.length > 0 ? [...ARRAY_VARIANTS, [value[0], value[0]], [value[0]]] : ARRAY_VARIANTS;
  }
  if (value && typeof value === 'object') return OBJECT_VARIANTS;
  return ['x', 5, {}];
}

function setAt(doc: Doc, path: Path, value: Json | typeof DELETE): Doc {
  const copy = structuredClone(doc);
  let node: any = copy;
  for (const seg of path.slice(0, -1)) node = node[seg];
  const last = path[path.length - 1];
  if (value === DELETE) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
  return copy;
}

interface Mutation {
  label: string;
  path: Path;
  doc: Doc;
}

function* mutations(doc: Doc): Generator<Mutation> {
  function* walk(value: Json, path: Path): Generator<Mutation> {
    const show = path.join('.') || '(root)';
    if (path.length > 0) {
      yield { label: `drop ${show}`, path, doc: setAt(doc, path, DELETE) };
      for (const alt of variantsOf(value)) yield { label: `${show} = ${JSON.stringify(alt)}`, path, doc: setAt(doc, path, alt) };
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) yield* walk(value[i], [...path, i]);
    } else if (value && typeof value === 'object') {
      yield { label: `add ${show}.${UNKNOWN_KEY}`, path, doc: setAt(doc, [...path, UNKNOWN_KEY], true) };
      for (const key of Object.keys(value)) yield* walk(value[key], [...path, key]);
    }
  }
  yield* walk(doc, []);
}

// ---- differential tests ------------------------------------------------------------------------

const stats = { bases: 0, documents: 0, valid: 0, specs: 0 };

test('corpus: every example is valid under the official schema of its generation', () => {
  for (const doc of EXAMPLES_03) {
    assert.ok(officialDoc('0.3', doc.kind as DocumentKind, doc), `0.3 example ${doc.kind} ${JSON.stringify(doc.metadata)}`);
  }
  for (const doc of EXAMPLES_02) {
    assert.ok(officialDoc('0.2', doc.kind as DocumentKind, doc), `0.2 example ${doc.kind} ${JSON.stringify(doc.metadata)}`);
  }
});

test('corpus: test vectors get their documented schema verdict from both validators', () => {
  for (const t of VECTORS) {
    const kind = t.doc.kind as DocumentKind;
    assert.is(officialDoc('0.3', kind, t.doc), t.schema === 'accept', `${t.id} official`);
    assert.is(oursDoc('0.3', kind, t.doc), t.schema === 'accept', `${t.id} valibot`);
  }
});

for (const gen of GENS) {
  for (const kind of DOCUMENT_KINDS) {
    if (!kindExistsIn(kind, gen)) continue;
    test(`differential ${gen} ${kind}: valibot and the official JSON Schema agree`, () => {
      const disagreements: string[] = [];
      const own = bases(gen).filter((d) => d.kind === kind);
      const valid = own.filter((d) => officialDoc(gen, kind, d));
      assert.ok(valid.length > 0, `no valid ${gen} ${kind} base document in the corpus`);
      for (const base of own) {
        stats.bases++;
        const name = `${kind}/${String((base.metadata as Doc | undefined)?.name)}`;
        const compare = (label: string, path: Path, doc: Doc) => {
          stats.documents++;
          const want = officialDoc(gen, kind, doc);
          if (want) stats.valid++;
          if (oursDoc(gen, kind, doc) !== want) {
            disagreements.push(`${name}: ${label} → official ${want ? 'valid' : 'invalid'}, valibot ${want ? 'invalid' : 'valid'}`);
          }
          if (kind !== 'Claw' && path[0] === 'spec' && doc.spec !== undefined) {
            stats.specs++;
            const wantSpec = officialSpec(gen, kind, doc.spec);
            if (oursSpec(gen, kind as PrimitiveKind, doc.spec) !== wantSpec) {
              disagreements.push(`${name}: specSchema ${label} → official ${wantSpec ? 'valid' : 'invalid'}`);
            }
          }
        };
        compare('(base)', ['spec'], base);
        if (!officialDoc(gen, kind, base)) continue; // mutate only from valid documents
        for (const m of mutations(base)) compare(m.label, m.path, m.doc);
      }
      assert.equal(disagreements.slice(0, 25), [], `${disagreements.length} disagreement(s)`);
    });
  }
}

test('0.3-only fields are rejected by the 0.2 schemas (and by the official 0.2 schemas)', () => {
  const cases: [DocumentKind, Path, Json][] = [
    ['Skill', ['spec', 'world_model_ref'], 'environment-model'],
    ['Memory', ['spec', 'stores', 0, 'role'], 'episodic'],
    ['Telemetry', ['spec', 'events', 'planning_ops'], true],
    ['Telemetry', ['spec', 'metrics', 'prediction_error'], true],
    ['Claw', ['spec', 'world_models'], ['./wm.yaml']],
  ];
  for (const [kind, path, value] of cases) {
    const base = EXAMPLES_02.find((d) => d.kind === kind)!;
    const doc = setAt(base, path, value);
    assert.not.ok(officialDoc('0.2', kind, doc), `official 0.2 ${kind} ${path.join('.')}`);
    assert.not.ok(oursDoc('0.2', kind, doc), `valibot 0.2 ${kind} ${path.join('.')}`);
    const as03 = withVersion(doc, '0.3.0');
    assert.ok(officialDoc('0.3', kind, as03), `official 0.3 ${kind} ${path.join('.')}`);
    assert.ok(oursDoc('0.3', kind, as03), `valibot 0.3 ${kind} ${path.join('.')}`);
  }
  const worldModel = withVersion(EXAMPLES_03.find((d) => d.kind === 'WorldModel')!, '0.2.0');
  assert.not.ok(v.safeParse(documentSchema('0.2', 'WorldModel'), worldModel).success);
  assert.not.ok(v.safeParse(specSchema('0.2', 'WorldModel'), {}).success);
});

// ---- deliberate differences --------------------------------------------------------------------

test('claw: any patch of the same minor passes, other minors and majors fail', () => {
  const accept: Record<SchemaGeneration, string[]> = {
    '0.2': ['0.2.0', '0.2.9', '0.2.10-rc.1'],
    '0.3': ['0.3.0', '0.3.7', '0.3.12', '0.3.1-beta.2'],
  };
  const reject: Record<SchemaGeneration, string[]> = {
    '0.2': ['0.3.0', '0.1.0', '1.2.0', '0.2', '0.2.x', ' 0.2.0', '0.2.0-'],
    '0.3': ['0.4.0', '1.3.0', '0.2.0', '0.3', '0.3.x', '0.30.0', 'v0.3.0', '0.3.0\n'],
  };
  for (const gen of GENS) {
    for (const base of bases(gen).filter((d) => oursDoc(gen, d.kind as DocumentKind, d))) {
      const kind = base.kind as DocumentKind;
      for (const claw of accept[gen]) assert.ok(oursDoc(gen, kind, withVersion(base, claw)), `${gen} ${kind} claw ${claw}`);
      for (const claw of reject[gen]) {
        assert.not.ok(oursDoc(gen, kind, withVersion(base, claw)), `${gen} ${kind} claw ${JSON.stringify(claw)}`);
      }
    }
  }
  // The official schema pins the exact version: this is the one intended disagreement.
  const tool = withVersion(EXAMPLES_03.find((d) => d.kind === 'Tool')!, '0.3.7');
  assert.not.ok(officialDoc('0.3', 'Tool', tool));
  assert.ok(oursDoc('0.3', 'Tool', tool));
});

test('format: uri is permissive: known values the official RFC 3986 check rejects', () => {
  const provider = EXAMPLES_03.find((d) => d.kind === 'Provider')!;
  const withEndpoint = (endpoint: string) => setAt(provider, ['spec', 'endpoint'], endpoint);
  for (const endpoint of ['C:\\models\\llama', 'https://exämple.com/v1', 'http://[::1/v1']) {
    assert.not.ok(officialDoc('0.3', 'Provider', withEndpoint(endpoint)), `official ${endpoint}`);
    assert.ok(oursDoc('0.3', 'Provider', withEndpoint(endpoint)), `valibot ${endpoint}`);
  }
  for (const endpoint of ['localhost', '://x', '1http://x', 'http:', 'http://a b', '']) {
    assert.not.ok(oursDoc('0.3', 'Provider', withEndpoint(endpoint)), `valibot ${JSON.stringify(endpoint)}`);
  }
});

// ---- issue paths and messages --------------------------------------------------------------

function issues(gen: SchemaGeneration, kind: DocumentKind, doc: unknown): { path: string; message: string }[] {
  const r = v.safeParse(documentSchema(gen, kind), doc);
  return r.success ? [] : r.issues.map((i) => ({ path: v.getDotPath(i) ?? '', message: i.message }));
}

function hasIssue(list: { path: string; message: string }[], path: string, message: string | RegExp) {
  const matches = (m: string) => (typeof message === 'string' ? m === message : message.test(m));
  const hit = list.find((i) => i.path === path && matches(i.message));
  assert.ok(hit, `expected issue at ${path} matching ${message}; got ${JSON.stringify(list)}`);
}

const example = (kind: DocumentKind, i = 0) => EXAMPLES_03.filter((d) => d.kind === kind)[i];

test('issue paths: if/then required fields point at the missing field itself', () => {
  // Tool without mcp_source: both `description` and `input_schema` become required. Path is the
  // missing field (spec.description), not `spec`.
  let doc = setAt(setAt(example('Tool'), ['spec', 'mcp_source'], DELETE), ['spec', 'description'], DELETE);
  let list = issues('0.3', 'Tool', doc);
  hasIssue(list, 'spec.description', 'description is required when mcp_source is absent');
  assert.is(list.length, 1);
  doc = setAt(doc, ['spec', 'input_schema'], DELETE);
  list = issues('0.3', 'Tool', doc);
  hasIssue(list, 'spec.input_schema', 'input_schema is required when mcp_source is absent');
  // Also reported alongside an unrelated issue (partial check semantics).
  list = issues('0.3', 'Tool', setAt(doc, ['spec', 'timeout_ms'], -1));
  hasIssue(list, 'spec.description', /mcp_source/);
  hasIssue(list, 'spec.timeout_ms', /Expected >=0/);

  list = issues('0.3', 'Provider', setAt(example('Provider'), ['spec', 'auth', 'secret_ref'], DELETE));
  hasIssue(list, 'spec.auth.secret_ref', 'secret_ref is required unless auth type is "none"');

  const channel = example('Channel');
  list = issues('0.3', 'Channel', setAt(channel, ['spec', 'access_control', 'allowed_ids'], DELETE));
  hasIssue(list, 'spec.access_control.allowed_ids', 'allowed_ids is required when mode is "allowlist"');
  list = issues('0.3', 'Channel', setAt(channel, ['spec', 'access_control', 'mode'], 'pairing'));
  hasIssue(list, 'spec.access_control.pairing', 'pairing is required when mode is "pairing"');
  list = issues('0.3', 'Channel', setAt(channel, ['spec', 'access_control', 'mode'], 'role-based'));
  hasIssue(list, 'spec.access_control.roles', 'roles is required when mode is "role-based"');
});

test('issue paths: required, unknown, pattern, type and minItems issues', () => {
  const claw = EXAMPLES_03.find((d) => d.kind === 'Claw' && (d.metadata as Doc).name === 'minimal-bot')!;
  // [base document, mutated path, new value, expected issue path, expected message]
  const cases: [Doc, Path, Json | typeof DELETE, string, string | RegExp][] = [
    [example('Identity'), ['spec', 'personality'], DELETE, 'spec.personality', 'missing required field "personality"'],
    [example('Identity'), ['spec', 'mood'], 'happy', 'spec.mood', 'unknown field "mood"'],
    [example('Identity'), ['surprise'], 1, 'surprise', 'unknown field "surprise"'],
    [example('Identity'), ['metadata', 'name'], '-bad', 'metadata.name', /spec §7 name/],
    [example('Identity'), ['metadata', 'version'], '1.0', 'metadata.version', /semantic version/],
    [example('Identity'), ['claw'], '0.4.0', 'claw', 'must be a CKP 0.3.x version, e.g. "0.3.0"'],
    [example('Identity'), ['kind'], 'Tool', 'kind', /Expected "Identity"/],
    [example('Identity'), ['spec'], [], 'spec', 'Invalid type: Expected Object but received Array'],
    [example('Identity'), ['spec', 'autonomy'], 'rogue', 'spec.autonomy', /"observer" \| "supervised" \| "autonomous"/],
    [example('Policy'), ['spec', 'audit', 'retention'], '90 days', 'spec.audit.retention', /s, m, h or d/],
    [example('Provider'), ['spec', 'endpoint'], 'localhost', 'spec.endpoint', /absolute URI/],
    [example('Provider', 1), ['spec', 'capabilities'], ['text', 'text'], 'spec.capabilities', 'must not contain duplicates'],
    [example('Telemetry'), ['spec', 'sampling', 'rate'], 1.5, 'spec.sampling.rate', /Expected <=1/],
    [example('Memory'), ['spec', 'stores'], [], 'spec.stores', 'must have at least one entry'],
    [example('Memory'), ['spec', 'stores', 1, 'type'], 'graph', 'spec.stores.1.type', /Expected/],
    [claw, ['spec', 'providers'], [], 'spec.providers', 'must have at least one entry'],
    // oneOf [string, object]: the input's JSON type picks the branch, whose issues come through as-is.
    [claw, ['spec', 'identity', 'inline', 'personality'], DELETE, 'spec.identity.inline.personality', /"personality"/],
    [claw, ['spec', 'providers', 0, 'inline', 'model'], '', 'spec.providers.0.inline.model', 'must not be empty'],
    [claw, ['spec', 'identity'], 5, 'spec.identity', 'must be a reference string or an object'],
    [claw, ['spec', 'tools'], [''], 'spec.tools.0', 'must not be empty'],
  ];
  for (const [base, path, value, issuePath, message] of cases) {
    hasIssue(issues('0.3', base.kind as DocumentKind, setAt(base, path, value)), issuePath, message);
  }
});

test('specSchema validates a bare spec (inline primitives, §6.1)', () => {
  assert.ok(v.safeParse(specSchema('0.3', 'Sandbox'), { level: 'process' }).success);
  assert.not.ok(v.safeParse(specSchema('0.3', 'Sandbox'), { level: 'process', name: 'x' }).success);
  assert.ok(v.safeParse(specSchema('0.3', 'Tool'), { mcp_source: { uri: 'stdio:///x' } }).success);
  assert.ok(v.safeParse(specSchema('0.2', 'Skill'), { description: 'd', tools_required: ['t'], instruction: 'i' }).success);
  assert.is(specSchema('0.2', 'Tool'), specSchema('0.3', 'Tool'), 'identical generations share one schema');
  assert.is(documentSchema('0.3', 'Tool'), documentSchema('0.3', 'Tool'), 'document schemas are cached');
});

test('valibot output keeps unknown keys where the JSON Schema allows them', () => {
  const doc = example('Policy');
  const r = v.safeParse(documentSchema('0.3', 'Policy'), setAt(doc, ['metadata', 'team'], 'ops'));
  assert.ok(r.success);
  const out = r.output as { metadata: Doc; spec: { rules: { conditions?: Doc }[] } };
  assert.is(out.metadata.team, 'ops');
  assert.is(out.spec.rules[2].conditions?.extra_condition, 'conditions allow additional properties');
});

test.after(() => {
  console.log(
    `  schema differential: ${stats.bases} base documents, ${stats.documents} documents compared ` +
      `(${stats.valid} valid, ${stats.documents - stats.valid} invalid per the official schemas), ${stats.specs} bare specs compared`,
  );
});

test.run();
