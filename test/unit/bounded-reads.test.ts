// Every configuration file goes through the bounded reader (src/node/fs-reader.ts): the runtime configuration
// and secrets files from CLAW_SECRETS_DIR too. A FIFO or device there is refused at once, never read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsReader, readBoundedText } from '../../src/node/fs-reader.ts';
import { loadRuntimeConfig } from '../../src/config/load-config.ts';
import { MAX_SECRET_FILE_BYTES, SecretResolver } from '../../src/kernel/secrets.ts';
import { Redactor } from '../../src/log/redactor.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-bounded-'));
execFileSync('mkfifo', [join(dir, 'claw.runtime.yaml')]);
execFileSync('mkfifo', [join(dir, 'FIFO_TOKEN')]);
writeFileSync(join(dir, 'BIG_TOKEN'), 'k'.repeat(MAX_SECRET_FILE_BYTES + 1));
writeFileSync(join(dir, 'GOOD_TOKEN'), 'good-token-value\n');

test.after(() => rmSync(dir, { recursive: true, force: true }));

const within = async <T>(p: Promise<T>, ms = 2000): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
};

test('claw.runtime.yaml that is a FIFO, or --config /dev/zero: one issue, at once', async () => {
  const reader = createFsReader();
  const beside = await within(loadRuntimeConfig(reader, { besideDir: dir }));
  assert.equal(beside.issues.map((i) => [i.rule, i.message]), [['file-not-regular', 'runtime configuration is not a regular file (a device, FIFO or socket)']]);
  const zero = await within(loadRuntimeConfig(reader, { explicit: '/dev/zero' }));
  assert.equal(zero.issues.map((i) => i.rule), ['file-not-regular']);
});

test('a secrets file is read with a cap: a FIFO or an oversized file does not resolve, a small file does', async () => {
  const seen: number[] = [];
  const r = new SecretResolver(
    { dir, readFile: async (p, o) => (seen.push(o.maxBytes), readBoundedText(p, o)) },
    new Redactor(),
  );
  for (const ref of ['FIFO_TOKEN', 'BIG_TOKEN']) {
    const e = await within(r.resolve(ref).then(() => undefined, (x) => x));
    assert.is((e as { code?: string })?.code, 'secret-unresolved', ref);
  }
  assert.is(await r.resolve('GOOD_TOKEN'), 'good-token-value');
  assert.equal(seen, [MAX_SECRET_FILE_BYTES, MAX_SECRET_FILE_BYTES, MAX_SECRET_FILE_BYTES]);
});

test.run();
