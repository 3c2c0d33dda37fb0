// Skills in the agent loop (src/agent/skills.ts, docs/agent.md "Skills"): which apply, which skill a
// tool call is attributed to, the permissions that bind it, and the sandbox they narrow to.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applicableSkills, callPermissions, skillForTool, skillSandbox, skillsForTool } from '../../src/agent/skills.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

const skill = (name: string, tools: string[], permissions?: Record<string, unknown>) =>
  primitive('Skill', name, { description: `${name} skill`, instruction: `use ${tools.join('+')}`, tools_required: tools, ...(permissions ? { permissions } : {}) });

test('a skill applies only when every tool it requires is bound', () => {
  const m = makeManifest(2, { skills: [skill('notes', ['file-write']), skill('web', ['http-fetch', 'file-write']), skill('none', [])] });
  assert.equal(
    applicableSkills(m, new Set(['file-write'])).map((s) => s.name),
    ['notes', 'none'],
  );
  assert.equal(applicableSkills(m, new Set(['file-write', 'http-fetch']))[1], { name: 'web', description: 'web skill', instruction: 'use http-fetch+file-write' });
});

test('a skill wrapped by a bound composite tool is offered as that tool, not in the skills list', () => {
  const composite = primitive('Tool', 'research', { description: 'research', input_schema: { type: 'object' }, composite: true, skill_ref: 'web' });
  const m = makeManifest(2, { skills: [skill('notes', ['file-write']), skill('web', ['http-fetch', 'file-write'])], tools: [composite] });
  assert.equal(applicableSkills(m, new Set(['file-write', 'http-fetch', 'research'])).map((s) => s.name), ['notes']);
  // The composite not bound here: the skill is listed as before.
  assert.equal(applicableSkills(m, new Set(['file-write', 'http-fetch'])).map((s) => s.name), ['notes', 'web']);
});

test('attribution: no skill requires the tool → no skill and nothing to narrow', () => {
  const m = makeManifest(2, { skills: [skill('notes', ['file-write'], { filesystem: 'none' })] });
  assert.is(skillForTool(m, 'echo'), undefined);
  assert.equal(skillsForTool(m, 'echo'), []);
  assert.is(callPermissions([]), undefined);
});

test('attribution: the strictest candidate names the call', () => {
  const m = makeManifest(2, {
    skills: [skill('loose', ['file-write'], { filesystem: 'full' }), skill('strict', ['file-write'], { filesystem: 'read-only', network: false }), skill('other', ['echo'])],
  });
  assert.is(skillForTool(m, 'file-write')!.name, 'strict');
  assert.is(skillForTool(m, 'echo')!.name, 'other');
  // The manifest's order is not changed by the lookup.
  assert.equal(m.skills.map((s) => s.name), ['loose', 'strict', 'other']);
});

test('permissions of a call: every candidate skill restricts it (incomparable candidates do not cancel out)', () => {
  // One skill denies the filesystem, the other the network: neither is stricter in every respect.
  const m = makeManifest(2, { skills: [skill('no-files', ['tool'], { filesystem: 'none' }), skill('no-net', ['tool'], { network: false, filesystem: 'full' })] });
  assert.equal(callPermissions(skillsForTool(m, 'tool')), { network: false, filesystem: 'none' });
  const n = makeManifest(2, { skills: [skill('a', ['t'], { filesystem: 'write-workspace' }), skill('b', ['t'], { approval_required: true }), skill('c', ['t'])] });
  assert.equal(callPermissions(skillsForTool(n, 't')), { filesystem: 'write-workspace', approval_required: true });
  const o = makeManifest(2, { skills: [skill('a', ['t'], { network: true, filesystem: 'full', approval_required: false })] });
  assert.equal(callPermissions(skillsForTool(o, 't')), {});
});

test('the sandbox a skill allows: unset or full permissions narrow nothing; the rest intersect with level none', () => {
  assert.is(skillSandbox(undefined, '/ws'), undefined);
  assert.is(skillSandbox({}, '/ws'), undefined);
  assert.is(skillSandbox({ network: true, filesystem: 'full' }, '/ws'), undefined);
  assert.equal(skillSandbox({ network: false }, '/ws'), { level: 'none', capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'full' } } });
  assert.equal(skillSandbox({ filesystem: 'none' }, '/ws'), { level: 'none', capabilities: { network: { mode: 'allow-all' }, filesystem: { mode: 'deny' } } });
  assert.equal(skillSandbox({ filesystem: 'read-only' }, '/ws'), { level: 'none', capabilities: { network: { mode: 'allow-all' }, filesystem: { mode: 'read-only' } } });
  assert.equal(skillSandbox({ filesystem: 'write-workspace', network: false }, '/ws'), {
    level: 'none',
    capabilities: {
      network: { mode: 'deny' },
      filesystem: {
        mode: 'scoped',
        mount_paths: [
          { path: '/', permissions: 'ro' },
          { path: '/ws', permissions: 'rw' },
        ],
      },
    },
  });
});

test.run();
