import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  SECRET_DETECTORS,
  applySecretScanning,
  applySecretScanningToArgs,
  applySecretScanningToResult,
  scanSecrets,
  scansInputs,
  scansOutputs,
} from '../../src/policy/secret-scan.ts';

// Fake tokens are assembled at run time (j(...)) so this file never holds a literal that a
// repository secret scanner (e.g. push protection) would flag.
const j = (...parts: string[]) => parts.join('');
const HEX40 = '0123456789abcdef0123456789abcdef01234567';
const B64_86 = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw';

// [detector kind, text, exact redacted text]
const POSITIVES: [string, string, string][] = [
  ['aws-access-key-id', j('id=AKIA', 'IOSFODNN7EXAMPLE;'), 'id=[REDACTED:aws-access-key-id];'],
  [
    'aws-secret-access-key',
    j('aws_secret_access_key = ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'),
    'aws_secret_access_key = [REDACTED:aws-secret-access-key]',
  ],
  ['github-token', j('token ghp', '_1234567890abcdefghijABCDEFGHIJ123456 end'), 'token [REDACTED:github-token] end'],
  [
    'github-fine-grained-token',
    j('github', '_pat_11ABCDEFG0123456789abc_', 'a'.repeat(59)),
    '[REDACTED:github-fine-grained-token]',
  ],
  ['gitlab-token', j('glpat', '-abcdefghij0123456789'), '[REDACTED:gitlab-token]'],
  ['slack-token', j('xoxb', '-1234567890-abcdefghij'), '[REDACTED:slack-token]'],
  [
    'slack-webhook',
    j('hook: https://hooks.slack.com/services/', 'T0123ABCD/B0123ABCD/abcdefghijklmnop1234'),
    'hook: [REDACTED:slack-webhook]',
  ],
  ['stripe-secret-key', j('sk_', 'live_4eC39HqLyjWDarjtT1zdp7dc'), '[REDACTED:stripe-secret-key]'],
  ['anthropic-api-key', j('key: sk-', 'ant-api03-abcdefghijklmnopqrstuvwxyz012345'), 'key: [REDACTED:anthropic-api-key]'],
  ['openai-api-key', j('OPENAI=sk-', 'proj-abcdefghij0123456789ABCDEFGHIJ'), 'OPENAI=[REDACTED:openai-api-key]'],
  ['google-api-key', j('AIza', 'SyA1234567890abcdefghijklmnopqrstuv'), '[REDACTED:google-api-key]'],
  ['google-oauth-client-secret', j('GOCSPX', '-abcdefghijklmnopqrstuvwxyz12'), '[REDACTED:google-oauth-client-secret]'],
  [
    'jwt',
    j('jwt=eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
    'jwt=[REDACTED:jwt]',
  ],
  [
    'private-key',
    j('key:\n-----BEGIN ', 'RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----\ndone'),
    'key:\n[REDACTED:private-key]\ndone',
  ],
  ['password-assignment', 'db password=hunter22 ok', 'db password=[REDACTED:password-assignment] ok'],
  ['bearer-token', 'Authorization: Bearer abcdef123456.xyz', 'Authorization: Bearer [REDACTED:bearer-token]'],
  ['basic-auth', 'authorization: Basic dXNlcjpwYXNzd29yZA==', 'authorization: Basic [REDACTED:basic-auth]'],
  ['npm-token', j('//registry.npmjs.org/:_authToken=npm', '_abcdefghijklmnopqrstuvwxyz0123456789'), '//registry.npmjs.org/:_authToken=[REDACTED:npm-token]'],
  ['pypi-token', j('pypi', '-AgEIcHlwaS5vcmc', 'x'.repeat(60)), '[REDACTED:pypi-token]'],
  ['twilio-api-key', j('SK', '0123456789abcdef0123456789abcdef'), '[REDACTED:twilio-api-key]'],
  ['sendgrid-api-key', j('SG', '.abcdefghijklmnopqrstuv.', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'), '[REDACTED:sendgrid-api-key]'],
  [
    'azure-storage-key',
    j('AccountName=x;AccountKey=', B64_86, '==;EndpointSuffix=core.windows.net'),
    'AccountName=x;AccountKey=[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net',
  ],
  ['huggingface-token', j('hf', '_abcdefghijklmnopqrstuvwxyzABCDEFGH'), '[REDACTED:huggingface-token]'],
  ['digitalocean-token', j('dop', '_v1_', HEX40, 'abcdef0123456789abcdef01'), '[REDACTED:digitalocean-token]'],
  ['shopify-token', j('shpat', '_0123456789abcdef0123456789abcdef'), '[REDACTED:shopify-token]'],
  ['telegram-bot-token', j('123456789', ':AAabcdefghijklmnopqrstuvwxyz0123456'), '[REDACTED:telegram-bot-token]'],
  ['age-secret-key', j('AGE-SECRET', '-KEY-1', 'QQ'.repeat(29)), '[REDACTED:age-secret-key]'],
  [
    'url-credentials',
    'postgres://admin:s3cr3tpw@db.example.com:5432/app',
    'postgres://admin:[REDACTED:url-credentials]@db.example.com:5432/app',
  ],
  ['api-key-assignment', 'api_key: "abcd1234efgh5678ijkl"', 'api_key: "[REDACTED:api-key-assignment]"'],
  ['generic-hex-secret', `webhook_signature=${HEX40}`, 'webhook_signature=[REDACTED:generic-hex-secret]'],
];

test('≥ 20 detectors, one positive each, exact redaction', () => {
  assert.ok(SECRET_DETECTORS.length >= 20, `${SECRET_DETECTORS.length}`);
  assert.equal(
    [...new Set(POSITIVES.map((p) => p[0]))].sort(),
    SECRET_DETECTORS.map((d) => d.kind).sort(),
    'every detector has a positive case',
  );
  for (const [kind, text, redacted] of POSITIVES) {
    const r = scanSecrets(text, []);
    assert.equal(r.findings.map((f) => f.kind), [kind], kind);
    assert.is(r.redacted, redacted, kind);
  }
});

test('more positives: variants of the assignment and PEM detectors', () => {
  const cases: [string, string][] = [
    ['{"password": "p@ss w0rd"}', '{"password": "[REDACTED:password-assignment]"}'],
    ["passwd: 'x'", "passwd: '[REDACTED:password-assignment]'"],
    ['DB_PASSWORD=abc123', 'DB_PASSWORD=[REDACTED:password-assignment]'],
    ['client secret=abc', 'client secret=[REDACTED:password-assignment]'],
    ['curl -H "Authorization: Bearer tok_abcdefgh"', 'curl -H "Authorization: Bearer [REDACTED:bearer-token]"'],
    [j('-----BEGIN ', 'OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----'), '[REDACTED:private-key]'],
    [j('"-----BEGIN ', 'PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n-----END PRIVATE KEY-----\\n"'), '"[REDACTED:private-key]\\n"'],
    [j('truncated: -----BEGIN ', 'EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\n"}'), 'truncated: [REDACTED:private-key]"}'],
  ];
  for (const [text, redacted] of cases) assert.is(scanSecrets(text).redacted, redacted, text);
});

test('negatives: hashes, UUIDs and look-alikes without a key-like name do not match', () => {
  const negatives = [
    `commit ${HEX40}`,
    `sha1: ${HEX40}`,
    'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    '550e8400-e29b-41d4-a716-446655440000',
    'request 123e4567-e89b-12d3-a456-426614174000 done',
    'AKIA1234 is too short',
    'eyJhbGciOiJIUzI1NiJ9 alone is only a header',
    'sk-learn-is-a-python-library-name',
    '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----',
    'https://user@example.com/path',
    'http://example.com:8080/a@b',
    'The key to success is persistence.',
    'secretary: Jane Doe',
    'Enter your password:',
    `the key ${HEX40} without assignment`,
  ];
  for (const text of negatives) assert.equal(scanSecrets(text).findings, [], text);
});

test('known secret values: exact occurrences, JSON-escaped form, short values ignored', () => {
  const r = scanSecrets('x my-db-pass-123 y my-db-pass-123', ['my-db-pass-123']);
  assert.equal(r.findings, [
    { kind: 'known-secret', start: 2, end: 16 },
    { kind: 'known-secret', start: 19, end: 33 },
  ]);
  assert.is(r.redacted, 'x [REDACTED:known-secret] y [REDACTED:known-secret]');
  const json = JSON.stringify({ v: 'pa"ss\\word' });
  assert.is(scanSecrets(json, ['pa"ss\\word']).redacted, '{"v":"[REDACTED:known-secret]"}');
  assert.is(scanSecrets('abc abc', ['abc', '']).redacted, 'abc abc');
  assert.is(scanSecrets('no secrets here', ['not-present']).redacted, 'no secrets here');
});

test('overlaps merge (kind of the earliest, ties: known first); touching findings stay apart', () => {
  const key = j('AKIA', 'IOSFODNN7EXAMPLE');
  // same start: known wins the tie
  assert.equal(scanSecrets(`${key}`, [key]).findings, [{ kind: 'known-secret', start: 0, end: 20 }]);
  // partial overlap: union, kind of the one that starts first
  const r = scanSecrets(`${key}_tail!`, ['EXAMPLE_tail']);
  assert.equal(r.findings, [{ kind: 'aws-access-key-id', start: 0, end: 25 }]);
  assert.is(r.redacted, '[REDACTED:aws-access-key-id]!');
  // touching
  assert.is(scanSecrets('abcdefgh', ['abcd', 'efgh']).redacted, '[REDACTED:known-secret][REDACTED:known-secret]');
  // nested: the known value inside a password assignment
  assert.is(scanSecrets('password=hunter22', ['hunter22']).redacted, 'password=[REDACTED:known-secret]');
});

test('scope: default output; input / both; disabled', () => {
  const cases: [Parameters<typeof scansInputs>[0], boolean, boolean][] = [
    [undefined, false, false],
    [{}, false, true],
    [{ enabled: true }, false, true],
    [{ enabled: false, scope: 'both' }, false, false],
    [{ scope: 'input' }, true, false],
    [{ enabled: true, scope: 'output' }, false, true],
    [{ enabled: true, scope: 'both' }, true, true],
  ];
  for (const [cfg, inp, out] of cases) {
    assert.is(scansInputs(cfg), inp, JSON.stringify(cfg));
    assert.is(scansOutputs(cfg), out, JSON.stringify(cfg));
  }
});

test('applySecretScanning: redact / block / warn / pass; messages never hold the secret', () => {
  const secret = 'sup3r-s3cret-value';
  const text = `result: ${secret} and password=hunter22`;
  const redacted = 'result: [REDACTED:known-secret] and password=[REDACTED:password-assignment]';
  const message = 'secret scanning: 2 finding(s) in the tool output (known-secret, password-assignment)';
  const findings = [
    { kind: 'known-secret', start: 8, end: 26 },
    { kind: 'password-assignment', start: 40, end: 48 },
  ];
  assert.equal(applySecretScanning(text, { enabled: true, action: 'redact' }, [secret]), { action: 'redacted', text: redacted, findings, message });
  assert.equal(applySecretScanning(text, { enabled: true }, [secret]), { action: 'redacted', text: redacted, findings, message }, 'redact is the default');
  assert.equal(applySecretScanning(text, { enabled: true, action: 'block' }, [secret]), { action: 'block', text: redacted, findings, message });
  assert.equal(applySecretScanning(text, { enabled: true, action: 'warn' }, [secret]), { action: 'warn', text, findings, message });
  assert.equal(applySecretScanning('clean output', { enabled: true, action: 'block' }, [secret]), { action: 'pass', text: 'clean output', findings: [] });
  assert.equal(applySecretScanning(text, { enabled: false, action: 'block' }, [secret]), { action: 'pass', text, findings: [] });
  assert.equal(applySecretScanning(text, undefined, [secret]), { action: 'pass', text, findings: [] });
  // direction vs scope
  assert.is(applySecretScanning(text, { scope: 'input', action: 'block' }, [secret]).action, 'pass', 'outputs not in scope');
  assert.is(applySecretScanning(text, { scope: 'input', action: 'block' }, [secret], 'input').action, 'block');
  assert.is(applySecretScanning(text, { action: 'block' }, [secret], 'input').action, 'pass', 'default scope is output');
  for (const a of ['redact', 'block', 'warn'] as const) {
    const m = applySecretScanning(text, { action: a }, [secret]).message ?? '';
    assert.not.ok(m.includes(secret) || m.includes('hunter22'), a);
  }
});

test('applySecretScanningToResult: text and resource.text blocks', () => {
  const secret = 'tok-123456';
  const result = {
    content: [
      { type: 'text' as const, text: `a ${secret}` },
      { type: 'image' as const, data: secret, mimeType: 'image/png' },
      { type: 'resource' as const, resource: { uri: 'file:///x', text: `b ${secret}` } },
      { type: 'text' as const, text: 'clean' },
    ],
  };
  const r = applySecretScanningToResult(result, { action: 'redact' }, [secret]);
  assert.is(r.action, 'redacted');
  assert.equal(r.result.content, [
    { type: 'text', text: 'a [REDACTED:known-secret]' },
    { type: 'image', data: secret, mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'file:///x', text: 'b [REDACTED:known-secret]' } },
    { type: 'text', text: 'clean' },
  ]);
  assert.equal(r.findings, [
    { block: 0, kind: 'known-secret', start: 2, end: 12 },
    { block: 2, kind: 'known-secret', start: 2, end: 12 },
  ]);
  assert.is(result.content[0].type === 'text' && result.content[0].text, `a ${secret}`, 'input not mutated');
  assert.is(applySecretScanningToResult(result, { action: 'warn' }, [secret]).result, result);
  assert.is(applySecretScanningToResult(result, { scope: 'input' }, [secret]).action, 'pass');
});

test('applySecretScanningToArgs: strings scanned one by one, keys too; paths from redacted keys', () => {
  const secret = 'tok-123456';
  const args = { url: `https://x/?t=${secret}`, list: [1, 'fine', secret], [secret]: 'v', password: 'not-a-finding' };
  const r = applySecretScanningToArgs(args, { scope: 'both', action: 'redact' }, [secret]);
  assert.is(r.action, 'redacted');
  assert.equal(r.args, {
    url: 'https://x/?t=[REDACTED:known-secret]',
    list: [1, 'fine', '[REDACTED:known-secret]'],
    '[REDACTED:known-secret]': 'v',
    password: 'not-a-finding',
  });
  assert.equal(
    r.findings.map((f) => [f.path, f.where, f.kind]),
    [
      ['$.url', 'value', 'known-secret'],
      ['$.list[2]', 'value', 'known-secret'],
      ['$["[REDACTED:known-secret]"]', 'key', 'known-secret'],
    ],
  );
  assert.not.ok(JSON.stringify(r.findings).includes(secret));
  assert.is(r.message, 'secret scanning: 3 finding(s) in the tool input (known-secret)');
  assert.is(applySecretScanningToArgs(args, { scope: 'output' }, [secret]).action, 'pass');
  assert.is(applySecretScanningToArgs(args, { scope: 'input', action: 'warn' }, [secret]).args, args);
  assert.is(applySecretScanningToArgs({ a: 'clean' }, { scope: 'input' }, [secret]).action, 'pass');
});

test('linear work: 1 MB adversarial inputs', () => {
  const MB = 1024 * 1024;
  const inputs = ['eyJ-'.repeat(MB / 4), 'sk-'.repeat(MB / 3), 'password='.repeat(MB / 9), '-----BEGIN A'.repeat(MB / 12), 'f'.repeat(MB), 'key: '.repeat(MB / 5)];
  for (const text of inputs) {
    const t0 = performance.now();
    scanSecrets(text, ['some-known-value']);
    const ms = performance.now() - t0;
    assert.ok(ms < 2000, `${text.slice(0, 12)}: ${ms.toFixed(1)} ms`); // a backtracking guard, loose for a loaded machine: super-linear takes minutes
  }
});

test.run();
