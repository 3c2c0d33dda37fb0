// compileFastAccept (src/tools/json-schema-fast.ts) against @cfworker/json-schema: whenever the
// shortcut says "valid", the full validator must agree, over many schemas and generated arguments.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Validator } from '@cfworker/json-schema';
import { compileFastAccept } from '../../src/tools/json-schema-fast.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
const VALUES: unknown[] = ['', 'x', 0, 1, -1.5, 2 ** 53, true, false, null, {}, { a: 1 }, [], [1], '1'];

function rng(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

test('plain schemas: fast "valid" implies full-validator valid; the shortcut is taken for most valid inputs', () => {
  const r = rng(7);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  let fastYes = 0;
  let fullYes = 0;
  for (let i = 0; i < 400; i++) {
    const names = ['a', 'b', 'text', '__proto__', 'constructor'].filter(() => r() < 0.5);
    const properties: Record<string, unknown> = {};
    for (const n of names) properties[n] = r() < 0.1 ? { description: 'any' } : r() < 0.05 ? true : { type: pick(TYPES), description: 'd' };
    const schema: Record<string, unknown> = { type: 'object', properties };
    if (r() < 0.6) schema.required = names.filter(() => r() < 0.6);
    if (r() < 0.4) schema.additionalProperties = r() < 0.5;
    const fast = compileFastAccept(schema);
    assert.ok(fast, `plain schema not recognised: ${JSON.stringify(schema)}`);
    const full = new Validator(schema as any, '2020-12', false);
    for (let j = 0; j < 40; j++) {
      const args: Record<string, unknown> = {};
      for (const n of ['a', 'b', 'text', 'other', '__proto__']) if (r() < 0.5) Object.defineProperty(args, n, { value: pick(VALUES), enumerable: true, configurable: true, writable: true });
      const input = r() < 0.05 ? pick(VALUES) : args;
      const ok = full.validate(input).valid;
      if (ok) fullYes++;
      if (fast(input)) {
        fastYes++;
        assert.ok(ok, `fast path accepted what the validator rejects: ${JSON.stringify(schema)} / ${JSON.stringify(input)}`);
      }
    }
  }
  assert.ok(fastYes > 0.9 * fullYes, `shortcut taken for ${fastYes} of ${fullYes} valid inputs`);
});

test('other schemas are left to the full validator', () => {
  for (const s of [
    { type: 'object', properties: { a: { type: 'string', minLength: 1 } } },
    { type: 'object', properties: { a: { type: ['string', 'null'] } } },
    { type: 'object', patternProperties: { '^x': { type: 'string' } } },
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } },
    { type: 'object', required: 'a' },
    { type: 'array' },
    {},
  ]) assert.is(compileFastAccept(s as Record<string, unknown>), undefined, JSON.stringify(s));
});

test('compileArgumentSchema: issues unchanged for invalid arguments of a plain schema', () => {
  const check = compileArgumentSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
  assert.equal(check({ text: 'hi' }), []);
  assert.equal(
    check({ text: 1, x: 2 }).map((i) => [i.path, i.keyword]),
    [
      ['', 'properties'],
      ['/text', 'type'],
      ['', 'additionalProperties'],
    ],
  );
});

test.run();
