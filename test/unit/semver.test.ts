// src/protocol/semver.ts against the regular expressions it replaced (spec §1.5 versions): the same strings are
// accepted, with the same parts, over hand-picked edge cases and 20,000 random strings over the relevant alphabet.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isVersion, parseVersion } from '../../src/protocol/semver.ts';
import { generationOf } from '../../src/manifest/generation.ts';
import { negotiateVersion } from '../../src/kernel/version.ts';
import { checkVersion } from '../../src/manifest/uri.ts';

const RE = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/;
const viaRegex = (s: string) => {
  const m = RE.exec(s);
  return m ? { major: m[1], minor: m[2], patch: m[3], ...(m[4] ? { pre: m[4].slice(1) } : {}) } : undefined;
};

test('edge cases', () => {
  const cases = ['0.3.0', '0.3.0-rc.1', '10.20.30', '00.3.0', '0.3', '0.3.0.', '0.3.0-', '-0.3.0', '0.3.0-a_b', '0.3.0-a b', '0.3.0-ü', ' 0.3.0', '0.3.0\n', '', 'x.y.z', '0..0', '1.2.3--', '1.2.3-.', '٣.1.1'];
  for (const s of cases) assert.equal(parseVersion(s), viaRegex(s), JSON.stringify(s));
  assert.equal(parseVersion('0.3.1-beta.2'), { major: '0', minor: '3', patch: '1', pre: 'beta.2' });
  assert.is(isVersion(3 as unknown), false);
});

test('random strings agree with the regular expression', () => {
  let seed = 11;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const alphabet = '0123456789..--aZ_ \n';
  for (let n = 0; n < 20_000; n++) {
    const len = Math.floor(rnd() * 10);
    let s = '';
    for (let i = 0; i < len; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    assert.equal(parseVersion(s), viaRegex(s), JSON.stringify(s));
    // claw:// URIs' version check accepts the same language and explains every rejection.
    const why = checkVersion(s);
    assert.is(why === undefined, viaRegex(s) !== undefined, JSON.stringify(s));
  }
});

test('its users: generation and negotiation keep their answers', () => {
  assert.equal(generationOf('0.3.7-rc.1'), { ok: true, gen: '0.3' });
  assert.equal(generationOf('0.2.0'), { ok: true, gen: '0.2' });
  assert.is(generationOf('00.3.0').ok, false, 'leading zeros select no generation');
  assert.is(generationOf('0.3').ok, false);
  assert.is(negotiateVersion('0.3.0'), '0.3.0');
  assert.is(negotiateVersion('0.2.9'), '0.2.0');
  assert.is(negotiateVersion('0.3.0-rc.1'), '0.2.0', 'a pre-release sorts before its release');
  assert.is(negotiateVersion('1.0.0'), undefined);
  assert.is(negotiateVersion('0.1.0'), undefined);
});

test.run();
