import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SecretResolver, type SecretSources } from '../../src/kernel/secrets.ts';
import { Redactor, REDACTED } from '../../src/log/redactor.ts';
import { ClawError } from '../../src/protocol/errors.ts';

const DIR = '/run/secrets';

/** A fake file system holding only files under DIR, recording every path read. */
function files(entries: Record<string, string>) {
  const reads: string[] = [];
  const readFile = async (path: string) => {
    reads.push(path);
    if (path in entries) return entries[path];
    const e = new Error(`ENOENT: ${path}`) as Error & { code: string };
    e.code = 'ENOENT';
    throw e;
  };
  return { reads, readFile };
}

function resolver(sources: SecretSources) {
  const redactor = new Redactor();
  return { r: new SecretResolver(sources, redactor), redactor };
}

async function rejects(p: Promise<unknown>): Promise<ClawError> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, ClawError);
    return e as ClawError;
  }
  throw new assert.Assertion({ message: 'expected a rejection', operator: 'rejects', expects: 'rejection', actual: 'resolved', generated: false });
}

test('precedence: store wins over env and file', async () => {
  const fs = files({ [`${DIR}/API_KEY`]: 'from-file' });
  const { r } = resolver({ store: { get: async () => 'from-store' }, env: { API_KEY: 'from-env' }, dir: DIR, readFile: fs.readFile });
  assert.is(await r.resolve('API_KEY'), 'from-store');
  assert.equal(fs.reads, [], 'the file is not read when the store has the value');
});

test('precedence: env when the store does not have it', async () => {
  const fs = files({ [`${DIR}/API_KEY`]: 'from-file' });
  const { r } = resolver({ store: { get: async () => undefined }, env: { API_KEY: 'from-env' }, dir: DIR, readFile: fs.readFile });
  assert.is(await r.resolve('API_KEY'), 'from-env');
  assert.equal(fs.reads, []);
});

test('precedence: file $CLAW_SECRETS_DIR/<ref> last; one trailing newline stripped', async () => {
  const fs = files({ [`${DIR}/API_KEY`]: 'from-file\n', [`${DIR}/CRLF`]: 'crlf-value\r\n', [`${DIR}/TWO`]: 'two\n\n' });
  const { r } = resolver({ store: { get: async () => undefined }, env: {}, dir: DIR, readFile: fs.readFile });
  assert.is(await r.resolve('API_KEY'), 'from-file');
  assert.is(await r.resolve('CRLF'), 'crlf-value');
  assert.is(await r.resolve('TWO'), 'two\n');
  assert.equal(fs.reads, [`${DIR}/API_KEY`, `${DIR}/CRLF`, `${DIR}/TWO`]);
});

test('an empty env value falls through to the file', async () => {
  const fs = files({ [`${DIR}/K`]: 'file-value' });
  const { r } = resolver({ env: { K: '' }, dir: DIR, readFile: fs.readFile });
  assert.is(await r.resolve('K'), 'file-value');
});

test('empty values are rejected (store, env, file), never returned', async () => {
  const fs = files({ [`${DIR}/E`]: '', [`${DIR}/NL`]: '\n' });
  const a = resolver({ store: { get: async () => '' } });
  assert.is((await rejects(a.r.resolve('S'))).code, 'secret-unresolved');
  const b = resolver({ env: { E: '' } });
  assert.is((await rejects(b.r.resolve('E'))).code, 'secret-unresolved');
  const c = resolver({ dir: DIR, readFile: fs.readFile });
  assert.is((await rejects(c.r.resolve('E'))).code, 'secret-unresolved');
  assert.is((await rejects(c.r.resolve('NL'))).code, 'secret-unresolved');
});

test('unresolvable: ClawError naming the ref and the places looked, without any value', async () => {
  const fs = files({ [`${DIR}/OTHER`]: 'other-secret-value' });
  const { r } = resolver({ env: { UNRELATED: 'unrelated-secret-value' }, dir: DIR, readFile: fs.readFile });
  const e = await rejects(r.resolve('MISSING_KEY'));
  assert.is(e.code, 'secret-unresolved');
  assert.match(e.message, /MISSING_KEY/);
  assert.match(e.message, /\/run\/secrets\/MISSING_KEY/);
  assert.not.match(e.message, /secret-value/);
  const noDir = resolver({ env: {} });
  assert.match((await rejects(noDir.r.resolve('X'))).message, /CLAW_SECRETS_DIR unset/);
});

test('an empty secret: the error carries no value either', async () => {
  const { r } = resolver({ store: { get: async () => '' } });
  const e = await rejects(r.resolve('TOKEN'));
  assert.match(e.message, /"TOKEN"/);
});

test('path traversal refs are never read as files', async () => {
  const fs = files({});
  const { r } = resolver({ dir: DIR, readFile: fs.readFile });
  for (const ref of ['../x', 'a/b', '..', '.', '/etc/passwd', '../../etc/shadow', 'a\\..\\b', 'x\0y', '', 'a b', 'a/../../b']) {
    await rejects(r.resolve(ref));
  }
  assert.equal(fs.reads, [], `nothing read: ${JSON.stringify(fs.reads)}`);
});

test('file reads stay inside the secrets dir for every accepted ref', async () => {
  const fs = files({});
  const { r } = resolver({ dir: DIR, readFile: fs.readFile });
  for (const ref of ['API_KEY', 'api.key', 'a-b_c', '...', 'v1.2']) await rejects(r.resolve(ref));
  for (const p of fs.reads) {
    assert.ok(p.startsWith(`${DIR}/`), p);
    assert.not.ok(p.slice(DIR.length + 1).includes('/'), p);
    assert.ok(p.slice(DIR.length + 1) !== '..' && p.slice(DIR.length + 1) !== '.', p);
  }
  assert.is(fs.reads.length, 5);
});

test('traversal refs may still come from the store or the environment (no file involved)', async () => {
  const { r } = resolver({ env: { 'a/b': 'env-value-ab' }, dir: DIR, readFile: files({}).readFile });
  assert.is(await r.resolve('a/b'), 'env-value-ab');
});

test('no readFile or no dir: the file step is skipped', async () => {
  const a = resolver({ dir: DIR });
  await rejects(a.r.resolve('K'));
  const fs = files({ [`undefined/K`]: 'nope' });
  const b = resolver({ readFile: fs.readFile });
  await rejects(b.r.resolve('K'));
  assert.equal(fs.reads, []);
});

test('resolved values are registered with the redactor (each source)', async () => {
  const fs = files({ [`${DIR}/F`]: 'file-secret-3' });
  const { r, redactor } = resolver({ store: { get: async (ref) => (ref === 'S' ? 'store-secret-1' : undefined) }, env: { E: 'env-secret-2' }, dir: DIR, readFile: fs.readFile });
  await r.resolve('S');
  await r.resolve('E');
  await r.resolve('F');
  assert.is(redactor.redact('a store-secret-1 b env-secret-2 c file-secret-3 d'), `a ${REDACTED} b ${REDACTED} c ${REDACTED} d`);
});

test('an unresolved secret registers nothing', async () => {
  const { r, redactor } = resolver({ env: {} });
  await rejects(r.resolve('MISSING'));
  assert.is(redactor.redact('MISSING'), 'MISSING', 'the ref name is not a secret');
});

test.run();
