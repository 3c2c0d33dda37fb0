import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isClawUri, isValidName, parseClawUri, primitiveKindOf, URI_KINDS } from '../../src/manifest/uri.ts';
import { PRIMITIVE_KINDS, URI_KIND } from '../../src/manifest/kinds.ts';

const n63 = 'a'.repeat(63);
const n64 = 'a'.repeat(64);

// [input, expected canonical, alias?]
const VALID: [string, string, boolean][] = [
  ...URI_KINDS.map((k): [string, string, boolean] => [`claw://local/${k}/x1`, `claw://local/${k}/x1`, false]),
  ...URI_KINDS.map((k): [string, string, boolean] => [`claw://${k}/my-${k}`, `claw://local/${k}/my-${k}`, true]),
  ['claw://local/tool/web-fetch@1.2.0', 'claw://local/tool/web-fetch@1.2.0', false],
  ['claw://local/identity/research-assistant', 'claw://local/identity/research-assistant', false],
  ['claw://local/world-model/environment-model', 'claw://local/world-model/environment-model', false],
  ['claw://registry/community-skills/deep-research@2.0.0', 'claw://registry/community-skills/deep-research@2.0.0', false],
  ['claw://registry/standard-tools/shell@1.0.0', 'claw://registry/standard-tools/shell@1.0.0', false],
  ['claw://registry/com.example.tools/shell@1.0.0-rc.1', 'claw://registry/com.example.tools/shell@1.0.0-rc.1', false],
  ['claw://local/skill/s@10.20.30-alpha-1.beta.2', 'claw://local/skill/s@10.20.30-alpha-1.beta.2', false],
  ['claw://local/skill/s@1.0.0--', 'claw://local/skill/s@1.0.0--', false],
  ['claw://local/skill/s@01.002.0003', 'claw://local/skill/s@01.002.0003', false], // ABNF: 1*DIGIT, leading zeros allowed
  [`claw://local/tool/${n63}`, `claw://local/tool/${n63}`, false],
  [`claw://tool/${n63}`, `claw://local/tool/${n63}`, true],
  [`claw://registry/${'n'.repeat(63)}/x@1.0.0`, `claw://registry/${'n'.repeat(63)}/x@1.0.0`, false],
  ['claw://local/tool/Web-Fetch-2', 'claw://local/tool/Web-Fetch-2', false], // ALPHA includes upper case
  ['claw://local/tool/-x-', 'claw://local/tool/-x-', false], // ABNF name allows a leading '-'
  ['claw://local/tool/123', 'claw://local/tool/123', false],
  // RFC 5234 §2.3: quoted literals are case-insensitive; canonical form lower-cases them.
  ['CLAW://LOCAL/TOOL/Web-Fetch', 'claw://local/tool/Web-Fetch', false],
  ['Claw://Tool/x', 'claw://local/tool/x', true],
  ['claw://Registry/NS/x@1.0.0', 'claw://registry/NS/x@1.0.0', false],
];

// [input, substring expected in the reason]
const INVALID: [string, string][] = [
  ['', "must start with 'claw://'"],
  ['http://local/tool/x', "must start with 'claw://'"],
  ['claw:/local/tool/x', "must start with 'claw://'"],
  ['claw:', "must start with 'claw://'"],
  ['claw://', 'nothing after'],
  ['claw://local', "'claw://local/' must be followed by"],
  ['claw://local/tool', "'claw://local/' must be followed by"],
  ['claw://local/tool/', 'name is empty'],
  ['claw://local//x', 'kind segment is empty'],
  ['claw://local/tools/x', "unknown kind 'tools'"],
  ['claw://local/worldmodel/x', "unknown kind 'worldmodel'"],
  ['claw://local/claw/x', "unknown kind 'claw'"],
  ['claw://local/tool/x/y', "unexpected extra path segment '/y'"],
  ['claw://local/tool/x/', "unexpected extra path segment '/'"],
  ['claw://tool/x/y', "unexpected extra path segment '/y'"],
  ['claw://registry/ns/x/y@1.0.0', "unexpected extra path segment '/y@1.0.0'"],
  [`claw://local/tool/${n64}`, 'is 64 characters long (maximum 63)'],
  [`claw://tool/${n64}`, 'is 64 characters long (maximum 63)'],
  [`claw://registry/${'n'.repeat(64)}/x@1.0.0`, 'namespace'],
  ['claw://local/tool/caf\u00e9', "'\u00e9' (U+00E9, non-ASCII)"],
  ['claw://local/tool/\u0430bc', 'non-ASCII'], // Cyrillic a
  ['claw://local/tool/x\u{1F600}', 'U+1F600'],
  ['claw://local/tool/a_b', "invalid character '_' at position 2"],
  ['claw://local/tool/a.b', "invalid character '.'"],
  ['claw://local/tool/a b', 'U+0020'],
  ['claw://local/tool/a%20b', "'%'"],
  ['claw://local/tool/x?v=1', 'query'],
  ['claw://local/tool/x#frag', 'fragment'],
  ['claw://registry/ns/x', "registry URIs must include '@{version}'"],
  ['claw://registry/ns', "'claw://registry/' must be followed by"],
  ['claw://registry//x@1.0.0', 'namespace is empty'],
  ['claw://registry/n_s/x@1.0.0', "namespace 'n_s' has invalid character '_'"],
  ['claw://registry/ns/@1.0.0', 'name is empty'],
  ['claw://local/tool/x@', 'version is empty'],
  ['claw://local/tool/x@1.0', "version '1.0' is not semver"],
  ['claw://local/tool/x@1.0.0.0', 'is not semver'],
  ['claw://local/tool/x@v1.0.0', 'is not semver'],
  ['claw://local/tool/x@1.0.0-', 'empty pre-release'],
  ['claw://local/tool/x@1.0.0+build.1', 'build metadata'],
  ['claw://local/tool/x@1.0.0-rc+b', 'build metadata is not allowed'],
  ['claw://local/tool/x@1.0.0-rc_1', "invalid character '_' in pre-release"],
  ['claw://local/tool/x@1.0.0@2.0.0', "invalid character '@'"],
  ['claw://local/tool/x@\u0661.0.0', 'is not semver'], // Arabic-Indic digit one
  ['claw://tool/web-fetch@1.2.0', 'alias form claw://{kind}/{name} cannot carry'],
  ['claw://tools/x', "unknown kind 'tools'"],
  ['claw://identity', "must be followed by /{name}"],
  ['claw://tool/', 'name is empty'],
  ['claw://claw/x', "unknown kind 'claw'"],
  [' claw://local/tool/x', "must start with 'claw://'"],
  ['claw://local/tool/x ', 'U+0020'],
];

test('valid URIs parse to their canonical form', () => {
  for (const [input, canonical, alias] of VALID) {
    const r = parseClawUri(input);
    if (!r.ok) assert.unreachable(`${input}: ${r.reason}`);
    else {
      assert.is(r.uri.canonical, canonical, input);
      assert.is(r.alias, alias, `${input} alias`);
    }
  }
});

test('invalid URIs are rejected with a precise reason', () => {
  for (const [input, reason] of INVALID) {
    const r = parseClawUri(input);
    if (r.ok) assert.unreachable(`${JSON.stringify(input)} should be rejected, got ${r.uri.canonical}`);
    else assert.ok(r.reason.includes(reason), `${JSON.stringify(input)}: reason "${r.reason}" should contain "${reason}"`);
  }
});

test('all eleven kinds are URI kinds, in both forms', () => {
  assert.is(URI_KINDS.length, 11);
  for (const k of PRIMITIVE_KINDS) {
    assert.is(primitiveKindOf(URI_KIND[k]), k);
    const local = parseClawUri(`claw://local/${URI_KIND[k]}/n`);
    const alias = parseClawUri(`claw://${URI_KIND[k]}/n`);
    assert.ok(local.ok && local.uri.form === 'local' && local.uri.kind === URI_KIND[k]);
    assert.ok(alias.ok && alias.alias && alias.uri.canonical === `claw://local/${URI_KIND[k]}/n`);
  }
  assert.is(primitiveKindOf('claw'), undefined);
});

test('parsed parts', () => {
  assert.equal(parseClawUri('claw://local/tool/web-fetch@1.2.0-rc.1'), {
    ok: true,
    alias: false,
    uri: { form: 'local', kind: 'tool', name: 'web-fetch', version: '1.2.0-rc.1', canonical: 'claw://local/tool/web-fetch@1.2.0-rc.1' },
  });
  assert.equal(parseClawUri('claw://world-model/env'), {
    ok: true,
    alias: true,
    uri: { form: 'local', kind: 'world-model', name: 'env', canonical: 'claw://local/world-model/env' },
  });
  assert.equal(parseClawUri('claw://registry/community-skills/deep-research@2.0.0'), {
    ok: true,
    alias: false,
    uri: { form: 'registry', namespace: 'community-skills', name: 'deep-research', version: '2.0.0', canonical: 'claw://registry/community-skills/deep-research@2.0.0' },
  });
});

test("'local' and 'registry' are authorities, not alias kinds", () => {
  const r = parseClawUri('claw://local/x');
  assert.ok(!r.ok && r.reason.includes("'claw://local/' must be followed by {kind}/{name}"));
  const g = parseClawUri('claw://registry/x');
  assert.ok(!g.ok && g.reason.includes("'claw://registry/' must be followed by"));
  const a = parseClawUri('claw://tool/local');
  assert.ok(a.ok && a.alias && a.uri.canonical === 'claw://local/tool/local');
});

test('isClawUri and isValidName', () => {
  assert.ok(isClawUri('claw://local/tool/x'));
  assert.ok(isClawUri('claw://anything'));
  assert.ok(isClawUri('CLAW://x'));
  assert.not.ok(isClawUri('web-fetch'));
  assert.not.ok(isClawUri('claw:/x'));
  assert.not.ok(isClawUri('xclaw://x'));
  assert.ok(isValidName('web-fetch'));
  assert.ok(isValidName(n63));
  assert.not.ok(isValidName(n64));
  assert.not.ok(isValidName(''));
  assert.not.ok(isValidName('caf\u00e9'));
});

test.run();
