import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { manifestLevel, negotiateCapabilities, levelName, CAPABILITY_GROUPS } from '../../src/kernel/conformance.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

test('levelName', () => {
  assert.is(levelName(1), 'level-1');
  assert.is(levelName(3), 'level-3');
});

test('manifestLevel: §11 required primitives', () => {
  assert.is(manifestLevel(makeManifest(1)), 1);
  assert.is(manifestLevel(makeManifest(2)), 2);
  assert.is(manifestLevel(makeManifest(3)), 3);
});

test('manifestLevel: any missing Level 2 primitive → 1', () => {
  assert.is(manifestLevel(makeManifest(2, { channels: [] })), 1);
  assert.is(manifestLevel(makeManifest(2, { tools: [] })), 1);
  assert.is(manifestLevel(makeManifest(2, { sandbox: undefined })), 1);
  assert.is(manifestLevel(makeManifest(2, { policies: [] })), 1);
});

test('manifestLevel: any missing Level 3 primitive → 2; WorldModel and Telemetry optional', () => {
  assert.is(manifestLevel(makeManifest(3, { skills: [] })), 2);
  assert.is(manifestLevel(makeManifest(3, { memory: undefined })), 2);
  assert.is(manifestLevel(makeManifest(3, { swarm: undefined })), 2);
  assert.is(manifestLevel(makeManifest(3, { worldModels: [], telemetry: undefined })), 3);
  // L3 primitives without L2 ones are still level 1.
  assert.is(manifestLevel(makeManifest(1, { skills: [primitive('Skill', 's')], memory: primitive('Memory', 'm'), swarm: primitive('Swarm', 'w') })), 1);
});

test('capability groups and their levels', () => {
  assert.equal(CAPABILITY_GROUPS, { tools: 2, swarm: 3, memory: 3 });
});

test('negotiateCapabilities: {} is unrestricted → every supported group', () => {
  assert.equal(negotiateCapabilities({}, ['tools', 'swarm', 'memory']), { tools: {}, swarm: {}, memory: {} });
  assert.equal(negotiateCapabilities({}, ['tools']), { tools: {} });
  assert.equal(negotiateCapabilities({}, []), {});
});

test('negotiateCapabilities: non-empty → intersection', () => {
  assert.equal(negotiateCapabilities({ tools: {} }, ['tools', 'swarm', 'memory']), { tools: {} });
  assert.equal(negotiateCapabilities({ swarm: {}, memory: {} }, ['tools']), {});
  assert.equal(negotiateCapabilities({ tools: {}, swarm: {}, memory: {} }, ['tools']), { tools: {} });
  assert.equal(negotiateCapabilities({ unknown: {} }, ['tools']), {}, 'an unknown key restricts, it is not "empty"');
});

test.run();
