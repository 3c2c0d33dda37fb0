import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { policySpec } from '../../src/manifest/schema/policy.ts';
import type { PolicySpec } from '../../src/manifest/schema/index.ts';
import {
  composeForCall,
  evaluatePolicy,
  isPathLikeKey,
  matchGlob,
  normalizePath,
  pathsWithin,
  ruleIssues,
  unknownConditionKeys,
  type Decision,
  type NamedPolicy,
  type PolicyCall,
} from '../../src/policy/evaluate.ts';

/** Every fixture must stay valid against the official schema (no new `match` keys). */
function pol(name: string, spec: unknown): NamedPolicy {
  return { name, spec: v.parse(policySpec, spec) as PolicySpec };
}
const call = (over: Partial<PolicyCall> = {}): PolicyCall => ({ tool: 'web-fetch', annotations: {}, args: {}, ...over });

// The spec §5.9 example policy, verbatim.
const standard = pol('standard-policy', {
  rules: [
    { id: 'deny-destructive', action: 'deny', scope: 'tool', match: { annotations: { destructiveHint: true } }, reason: 'Destructive tools are blocked by default' },
    {
      id: 'approve-network',
      action: 'require-approval',
      scope: 'category',
      match: { category: 'network' },
      reason: 'Network access requires human confirmation',
      approval: { timeout_seconds: 300, default_if_timeout: 'deny' },
    },
    { id: 'allow-readonly', action: 'allow', scope: 'tool', match: { annotations: { readOnlyHint: true } } },
    { id: 'allow-workspace-fs', action: 'allow', scope: 'category', match: { category: 'filesystem' }, conditions: { path_within: '/workspace' } },
    { id: 'default-deny', action: 'deny', scope: 'all', reason: 'Default deny policy' },
  ],
});

test('spec §5.9 example: each rule decides its calls, first match wins', () => {
  const cases: [string, PolicyCall, Decision][] = [
    [
      'destructive beats everything after it',
      call({ tool: 'rm', category: 'network', annotations: { destructiveHint: true, readOnlyHint: true } }),
      { action: 'deny', rule: { id: 'deny-destructive', policy: 'standard-policy', reason: 'Destructive tools are blocked by default' }, implicit: false },
    ],
    [
      'network category needs approval (params copied)',
      call({ category: 'network', annotations: { readOnlyHint: true } }),
      {
        action: 'require-approval',
        rule: {
          id: 'approve-network',
          policy: 'standard-policy',
          reason: 'Network access requires human confirmation',
          approval: { timeout_seconds: 300, default_if_timeout: 'deny' },
        },
        implicit: false,
      },
    ],
    ['read-only allowed', call({ tool: 'ls', annotations: { readOnlyHint: true } }), { action: 'allow', rule: { id: 'allow-readonly', policy: 'standard-policy' }, implicit: false }],
    [
      'filesystem within /workspace allowed',
      call({ tool: 'write', category: 'filesystem', args: { path: '/workspace/a.txt' } }),
      { action: 'allow', rule: { id: 'allow-workspace-fs', policy: 'standard-policy' }, implicit: false },
    ],
    [
      'filesystem escaping /workspace falls to default-deny',
      call({ tool: 'write', category: 'filesystem', args: { path: '/workspace/../etc/passwd' } }),
      { action: 'deny', rule: { id: 'default-deny', policy: 'standard-policy', reason: 'Default deny policy' }, implicit: false },
    ],
    [
      'destructiveHint: false is not true',
      call({ annotations: { destructiveHint: false } }),
      { action: 'deny', rule: { id: 'default-deny', policy: 'standard-policy', reason: 'Default deny policy' }, implicit: false },
    ],
  ];
  for (const [name, c, want] of cases) assert.equal(evaluatePolicy([standard], c), want, name);
});

test('no rule matches → implicit deny (no rule attached)', () => {
  const p = pol('p', { rules: [{ id: 'allow-ro', action: 'allow', scope: 'tool', match: { annotations: { readOnlyHint: true } } }] });
  assert.equal(evaluatePolicy([p], call()), { action: 'deny', implicit: true });
  assert.equal(evaluatePolicy([], call()), { action: 'deny', implicit: true });
});

test('rules are tried in array order; later rules are not reached', () => {
  const p = pol('p', {
    rules: [
      { id: 'a', action: 'audit-only', scope: 'all' },
      { id: 'b', action: 'deny', scope: 'all' },
    ],
  });
  assert.equal(evaluatePolicy([p], call()), { action: 'audit-only', rule: { id: 'a', policy: 'p' }, implicit: false });
});

test('two policies are one concatenated list: first policy first; the second decides what the first leaves', () => {
  const security = pol('security', { rules: [{ id: 'deny-net', action: 'deny', scope: 'category', match: { category: 'network' } }] });
  const spending = pol('spending', {
    rules: [
      { id: 'allow-net', action: 'allow', scope: 'category', match: { category: 'network' } },
      { id: 'audit-rest', action: 'audit-only', scope: 'all' },
    ],
  });
  assert.equal(evaluatePolicy([security, spending], call({ category: 'network' })).rule, { id: 'deny-net', policy: 'security' });
  assert.equal(evaluatePolicy([spending, security], call({ category: 'network' })).rule, { id: 'allow-net', policy: 'spending' });
  assert.equal(evaluatePolicy([security, spending], call({ category: 'fs' })), {
    action: 'audit-only',
    rule: { id: 'audit-rest', policy: 'spending' },
    implicit: false,
  });
});

test('every scope', () => {
  const rule = (r: object) => pol('p', { rules: [{ id: 'r', action: 'allow', ...r }] });
  const cases: [string, NamedPolicy, PolicyCall, boolean][] = [
    ['all matches a bare call', rule({ scope: 'all' }), call(), true],
    ['all matches a categorized call', rule({ scope: 'all' }), call({ category: 'x', skill: 's' }), true],
    ['tool without match matches every tool', rule({ scope: 'tool' }), call({ tool: 'anything' }), true],
    ['category equal', rule({ scope: 'category', match: { category: 'network' } }), call({ category: 'network' }), true],
    ['category different', rule({ scope: 'category', match: { category: 'network' } }), call({ category: 'Network' }), false],
    ['category: call without category', rule({ scope: 'category', match: { category: 'network' } }), call(), false],
    ['category rule without match.category matches nothing', rule({ scope: 'category' }), call({ category: 'network' }), false],
    ['match on scope all still narrows', rule({ scope: 'all', match: { category: 'network' } }), call({ category: 'fs' }), false],
    ['match.category on a tool rule narrows', rule({ scope: 'tool', match: { category: 'network' } }), call(), false],
  ];
  for (const [name, p, c, matches] of cases) assert.is(evaluatePolicy([p], c).action, matches ? 'allow' : 'deny', name);
});

test('annotations: equal / different / absent / deep-equal objects', () => {
  const rule = (annotations: object) => pol('p', { rules: [{ id: 'r', action: 'allow', scope: 'tool', match: { annotations } }] });
  const cases: [string, object, Record<string, unknown>, boolean][] = [
    ['true = true', { readOnlyHint: true }, { readOnlyHint: true }, true],
    ['true ≠ false', { readOnlyHint: true }, { readOnlyHint: false }, false],
    ['false = false', { readOnlyHint: false }, { readOnlyHint: false }, true],
    ['absent ≠ true', { readOnlyHint: true }, {}, false],
    ['absent ≠ false (no MCP defaults)', { readOnlyHint: false }, {}, false],
    ['absent ≠ null', { x: null }, {}, false],
    ['null = null', { x: null }, { x: null }, true],
    ['true ≠ "true"', { readOnlyHint: true }, { readOnlyHint: 'true' }, false],
    ['all entries must hold', { readOnlyHint: true, idempotentHint: true }, { readOnlyHint: true, idempotentHint: false }, false],
    ['extra tool annotations are fine', { readOnlyHint: true }, { readOnlyHint: true, title: 'x' }, true],
    ['empty match.annotations matches', {}, {}, true],
    ['objects deep-equal', { meta: { a: [1, { b: 2 }] } }, { meta: { a: [1, { b: 2 }] } }, true],
    ['objects differ deeply', { meta: { a: [1, { b: 2 }] } }, { meta: { a: [1, { b: 3 }] } }, false],
    ['object with extra key differs', { meta: { a: 1 } }, { meta: { a: 1, b: 2 } }, false],
    ['array order matters', { tags: ['a', 'b'] }, { tags: ['b', 'a'] }, false],
    ['array vs object', { tags: [] }, { tags: {} }, false],
    ['inherited property is not an annotation', { toString: true }, {}, false],
  ];
  for (const [name, want, have, matches] of cases) {
    assert.is(evaluatePolicy([rule(want)], call({ annotations: have })).action, matches ? 'allow' : 'deny', name);
  }
});

test('conditions.tool: name, glob, list', () => {
  const rule = (tool: unknown) => pol('p', { rules: [{ id: 'r', action: 'allow', scope: 'all', conditions: { tool } }] });
  const cases: [unknown, string, boolean][] = [
    ['web-fetch', 'web-fetch', true],
    ['web-fetch', 'web-fetch-2', false],
    ['web-*', 'web-fetch', true],
    ['web-*', 'web-', true],
    ['web-*', 'fetch-web', false],
    ['*-fetch', 'web-fetch', true],
    ['web-fet?h', 'web-fetch', true],
    ['web-fet?h', 'web-fetch2', false],
    ['*', 'anything', true],
    [['ls', 'cat', 'git-*'], 'git-status', true],
    [['ls', 'cat', 'git-*'], 'rm', false],
    [[], 'ls', false],
    ['web.fetch', 'webxfetch', false], // `.` is literal, not a regex wildcard
  ];
  for (const [pat, tool, matches] of cases) {
    assert.is(evaluatePolicy([rule(pat)], call({ tool })).action, matches ? 'allow' : 'deny', `${JSON.stringify(pat)} vs ${tool}`);
  }
});

test('conditions.skill: only calls on behalf of a matching skill; operator calls have no skill', () => {
  const p = pol('p', { rules: [{ id: 'r', action: 'allow', scope: 'all', conditions: { skill: ['research-*', 'summarize'] } }] });
  assert.is(evaluatePolicy([p], call({ skill: 'research-web' })).action, 'allow');
  assert.is(evaluatePolicy([p], call({ skill: 'summarize' })).action, 'allow');
  assert.is(evaluatePolicy([p], call({ skill: 'deploy' })).action, 'deny');
  assert.is(evaluatePolicy([p], call()).action, 'deny');
  const both = pol('p', { rules: [{ id: 'r', action: 'allow', scope: 'all', conditions: { skill: '*', tool: 'ls' } }] });
  assert.is(evaluatePolicy([both], call({ tool: 'ls', skill: 'x' })).action, 'allow');
  assert.is(evaluatePolicy([both], call({ tool: 'cat', skill: 'x' })).action, 'deny');
  assert.is(evaluatePolicy([both], call({ tool: 'ls' })).action, 'deny', 'skill "*" still needs a skill');
});

test('path_within: lexical normalization, traversal attempts, every path-like argument', () => {
  const cases: [unknown, boolean, string][] = [
    [{ path: '/workspace/a.txt' }, true, 'inside'],
    [{ path: '/workspace' }, true, 'the directory itself'],
    [{ path: '/workspace/' }, true, 'trailing slash'],
    [{ path: '/workspace/./x/../y' }, true, 'dots resolved inside'],
    [{ path: '/workspace/../etc/passwd' }, false, 'classic traversal'],
    [{ path: '/workspace/a/../../etc/passwd' }, false, 'deeper traversal'],
    [{ path: '/workspace/../workspace/a' }, true, 'out and back in is inside'],
    [{ path: '/workspace2/a' }, false, 'sibling with the same prefix'],
    [{ path: '/workspacex' }, false, 'prefix without separator'],
    [{ path: '//workspace//a' }, true, 'doubled slashes'],
    [{ path: '/../../workspace/a' }, true, '.. above root stays at root'],
    [{ path: '/etc/passwd' }, false, 'outside'],
    [{ path: 'a.txt' }, false, 'relative without cwd'],
    [{ path: '/workspace/a\0/b' }, false, 'NUL'],
    [{}, false, 'no path-like argument'],
    [{ url: '/workspace/a' }, false, 'non path-like key only'],
    [{ path: 42 }, false, 'non-string path value is not a path; none left'],
    [{ path: '/workspace/a', dest_path: '/etc/x' }, false, 'second path outside'],
    [{ src_dir: '/workspace/a', dest_path: '/workspace/b' }, true, '_dir and _path'],
    [{ opts: { nested: { cwd: '/tmp' } }, path: '/workspace/a' }, false, 'nested cwd outside'],
    [{ FILE: '/workspace/a' }, true, 'keys compared case-insensitively'],
    [{ files: ['/workspace/a'], path: '/workspace/b' }, true, '"files" is not a path key'],
    [{ path: ['/workspace/a', '/etc/b'] }, false, 'array under a path key: each element'],
    [{ directory: '/workspace/sub', filename: '/workspace/sub/f' }, true, 'directory, filename'],
  ];
  for (const [args, ok, name] of cases) assert.is(pathsWithin(args, '/workspace'), ok, name);
});

test('path_within: relative paths resolve against call.cwd; relative path_within too', () => {
  assert.is(pathsWithin({ path: 'a.txt' }, '/workspace', '/workspace'), true);
  assert.is(pathsWithin({ path: '../etc/passwd' }, '/workspace', '/workspace'), false);
  assert.is(pathsWithin({ path: 'a.txt' }, '/workspace', '/home'), false);
  assert.is(pathsWithin({ path: '/workspace/data/x' }, 'data', '/workspace'), true);
  assert.is(pathsWithin({ path: '/workspace/data/x' }, 'data'), false, 'relative path_within without cwd');
  assert.is(pathsWithin({ path: '/a' }, '/'), true, 'root contains everything');
  // through evaluatePolicy
  const p = pol('p', { rules: [{ id: 'r', action: 'allow', scope: 'all', conditions: { path_within: '/workspace' } }] });
  assert.is(evaluatePolicy([p], call({ args: { path: 'notes.md' }, cwd: '/workspace' })).action, 'allow');
  assert.is(evaluatePolicy([p], call({ args: { path: 'notes.md' } })).action, 'deny');
  assert.is(evaluatePolicy([p], call({ args: { path: '/workspace/../etc/passwd' }, cwd: '/workspace' })).action, 'deny');
});

test('path_within: too deep arguments fail closed', () => {
  let deep: unknown = { path: '/workspace/a' };
  for (let i = 0; i < 200; i++) deep = { d: deep };
  assert.is(pathsWithin(deep, '/workspace'), false);
});

test('unknown or malformed condition keys: the rule never matches, and they are listed', () => {
  const p = pol('p', {
    rules: [
      { id: 'unknown', action: 'allow', scope: 'all', conditions: { time_of_day: 'night' } },
      { id: 'bad-tool', action: 'allow', scope: 'all', conditions: { tool: 5 } },
      { id: 'bad-path', action: 'allow', scope: 'all', conditions: { path_within: '' } },
      { id: 'bad-list', action: 'allow', scope: 'all', conditions: { skill: ['a', 1] } },
      { id: 'cat', action: 'allow', scope: 'category' },
      { id: 'ok', action: 'audit-only', scope: 'all', conditions: {} },
    ],
  });
  assert.equal(evaluatePolicy([p], call({ skill: 'a', args: { path: '/x' } })), { action: 'audit-only', rule: { id: 'ok', policy: 'p' }, implicit: false });
  assert.equal(unknownConditionKeys(p.spec), [{ rule: 'unknown', key: 'time_of_day' }]);
  assert.equal(
    ruleIssues(p.spec, 'p').map((i) => [i.policy, i.rule, i.key, i.problem]),
    [
      ['p', 'unknown', 'time_of_day', 'unknown-condition'],
      ['p', 'bad-tool', 'tool', 'invalid-condition'],
      ['p', 'bad-path', 'path_within', 'invalid-condition'],
      ['p', 'bad-list', 'skill', 'invalid-condition'],
      ['p', 'cat', undefined, 'category-without-match'],
    ],
  );
  assert.equal(ruleIssues(standard.spec), []);
});

test('composeForCall: tool policy first, then manifest order, no repeat', () => {
  const a = pol('a', { rules: [{ id: 'a1', action: 'deny', scope: 'all' }] });
  const b = pol('b', { rules: [{ id: 'b1', action: 'allow', scope: 'all' }] });
  const c = pol('c', { rules: [{ id: 'c1', action: 'audit-only', scope: 'all' }] });
  const names = (ps: NamedPolicy[]) => ps.map((p) => p.name);
  assert.equal(names(composeForCall([a, b, c])), ['a', 'b', 'c']);
  assert.equal(names(composeForCall([a, b, c], 'b')), ['b', 'a', 'c']);
  assert.equal(names(composeForCall([a, b, c], 'a')), ['a', 'b', 'c']);
  assert.equal(names(composeForCall([a, b, c], c)), ['c', 'a', 'b']);
  const own = pol('own', { rules: [{ id: 'o1', action: 'allow', scope: 'all' }] });
  assert.equal(names(composeForCall([a, b], own)), ['own', 'a', 'b']);
  assert.throws(() => composeForCall([a], 'missing'), /policy_ref 'missing'/);
  // the override pattern: the tool's own allow wins over the manifest's deny
  assert.equal(evaluatePolicy(composeForCall([a, b], 'b'), call()).rule, { id: 'b1', policy: 'b' });
  assert.equal(evaluatePolicy(composeForCall([a, b]), call()).rule, { id: 'a1', policy: 'a' });
});

test('approval params only on require-approval; reason copied when present', () => {
  const p = pol('p', {
    rules: [{ id: 'r', action: 'deny', scope: 'all', approval: { timeout_seconds: 5 } }],
  });
  assert.equal(evaluatePolicy([p], call()), { action: 'deny', rule: { id: 'r', policy: 'p' }, implicit: false });
  const q = pol('q', { rules: [{ id: 'r', action: 'require-approval', scope: 'all', approval: { timeout_seconds: 5 } }] });
  assert.equal(evaluatePolicy([q], call()).rule, { id: 'r', policy: 'q', approval: { timeout_seconds: 5 } });
});

test('helpers: matchGlob, normalizePath, isPathLikeKey', () => {
  const globs: [string, string, boolean][] = [
    ['', '', true],
    ['', 'a', false],
    ['*', '', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['**', 'x', true],
    ['?', '', false],
    ['a*a*a*a*b', 'a'.repeat(200), false],
  ];
  for (const [p, t, ok] of globs) assert.is(matchGlob(p, t), ok, `${p} ${t}`);
  const paths: [string, string | undefined][] = [
    ['/', '/'],
    ['/a/b/../c/./d/', '/a/c/d'],
    ['/..', '/'],
    ['a/b', undefined],
    ['', undefined],
  ];
  for (const [p, n] of paths) assert.is(normalizePath(p), n, p);
  const keys: [string, boolean][] = [
    ['path', true], ['file', true], ['filename', true], ['dir', true], ['directory', true], ['cwd', true],
    ['src_path', true], ['out_dir', true], ['Path', true], ['paths', false], ['filepath', false], ['url', false], ['dirty', false],
  ];
  for (const [k, ok] of keys) assert.is(isPathLikeKey(k), ok, k);
});

test.run();
