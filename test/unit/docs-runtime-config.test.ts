// docs/runtime-config.md's reference block names every claw.runtime.yaml key a machine's owner can set: each
// top-level key of the configuration schema, and each key one level inside it (through records and arrays,
// e.g. providers.<name>.output, transports[].fs). A key added to the schema without a line there fails here;
// the block itself is validated as a claw.runtime.yaml in test/e2e/docs-examples.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';

type Schema = { type: string; entries?: Record<string, Schema>; wrapped?: Schema; value?: Schema; item?: Schema };

/** The object schema a key's value is, seen through optional, record and array; undefined for a leaf or a union. */
function objectOf(s: Schema | undefined): Record<string, Schema> | undefined {
  for (let i = 0; s && i < 8; i++) {
    if (s.entries) return s.entries;
    s = s.wrapped ?? s.value ?? s.item;
  }
  return undefined;
}

/** The reference block: the first yaml fence of docs/runtime-config.md. */
function referenceBlock(): string {
  const md = readFileSync(join(process.cwd(), 'docs', 'runtime-config.md'), 'utf8');
  const m = /^```yaml\n([\s\S]*?)^```/m.exec(md);
  assert.ok(m, 'docs/runtime-config.md has no yaml block');
  return m![1];
}

/** Each top-level key's lines in the block (from `key:` at column 0 to the next line at column 0). */
function sections(block: string): Map<string, string> {
  const out = new Map<string, string>();
  let key = '';
  for (const line of block.split('\n')) {
    const top = /^([a-z_0-9]+):/.exec(line);
    if (top) key = top[1];
    if (key) out.set(key, `${out.get(key) ?? ''}${line}\n`);
  }
  return out;
}

test('every claw.runtime.yaml key (top level and one level in) is in docs/runtime-config.md', () => {
  const entries = objectOf(runtimeConfigSchema as unknown as Schema)!;
  assert.ok(entries && Object.keys(entries).length > 10, 'the schema walk found the top-level keys');
  const docs = sections(referenceBlock());
  const missing: string[] = [];
  for (const [key, schema] of Object.entries(entries)) {
    const text = docs.get(key);
    if (text === undefined) {
      missing.push(key);
      continue;
    }
    for (const child of Object.keys(objectOf(schema) ?? {})) {
      if (!new RegExp(`(^|[\\s{,-])${child}:`, 'm').test(text)) missing.push(`${key}.${child}`);
    }
  }
  assert.equal(missing, [], `keys the schema has and docs/runtime-config.md does not name: ${missing.join(', ')}`);
});

test.run();
