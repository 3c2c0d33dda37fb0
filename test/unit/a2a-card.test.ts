// The AgentCard projection (docs/a2a.md "Agent card", CKP-A2A profile §5): the description rule, skills as
// AgentSkills, the security kinds, and nothing secret or internal in it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildAgentCard, summarizeDescription } from '../../src/a2a/card.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

const opts = { endpointUrl: 'http://127.0.0.1:8080/a2a', runtimeVersion: '0.1.0', security: { bearer: true, clientCert: false } };

function manifest(personality: string, annotations: Record<string, unknown> = {}) {
  const identity = { ...primitive('Identity', 'edge', { personality, context_files: { notes: '/etc/claw/notes.md' } }), annotations };
  const skill = { ...primitive('Skill', 'daily-report', { description: 'Writes the daily report', tools_required: ['file-write'], instruction: 'INTERNAL STEPS', input_schema: { type: 'object' } }), labels: { team: 'ops' } };
  return makeManifest(1, { identity, skills: [skill] });
}

test('description: the first sentence of the personality, at most 200 characters', () => {
  assert.is(summarizeDescription(manifest('You watch the greenhouse. Never tell anyone the door code 4411.')), 'You watch the greenhouse.');
  assert.is(summarizeDescription(manifest('No full stop at all')), 'No full stop at all');
  const long = summarizeDescription(manifest(`${'a'.repeat(300)}. Then more.`));
  assert.is(long.length, 200);
  assert.ok(long.endsWith('…'));
});

test('description: an a2a.description annotation wins', () => {
  assert.is(summarizeDescription(manifest('You are secret. Shh.', { 'a2a.description': 'Greenhouse monitor' })), 'Greenhouse monitor');
});

test('card: identity, interfaces, capabilities, bearer scheme, skills; no prompt, paths or instructions', () => {
  const card = buildAgentCard(manifest('You watch the greenhouse. The door code is 4411.'), opts) as any;
  assert.is(card.name, 'edge');
  assert.is(card.version, '1.2.3');
  assert.equal(card.supportedInterfaces.map((i: any) => `${i.protocolBinding} ${i.protocolVersion}`), ['JSONRPC 1.0', 'HTTP+JSON 1.0', 'JSONRPC 0.3']);
  assert.is(card.supportedInterfaces[0].url, 'http://127.0.0.1:8080/a2a');
  assert.equal(card.capabilities, { streaming: true, pushNotifications: false, extendedAgentCard: false });
  assert.is(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
  assert.equal(card.securityRequirements, [{ schemes: { bearer: { list: [] } } }]);
  assert.equal(card.skills, [{ id: 'daily-report', name: 'Daily report', description: 'Writes the daily report', tags: ['team:ops', 'tool:file-write'] }]);
  const text = JSON.stringify(card);
  for (const secret of ['4411', 'INTERNAL STEPS', '/etc/claw', 'input_schema', 'test-identity']) assert.not.ok(text.includes(secret), secret);
});

test('card: no credentials configured (loopback) → no security scheme; a client CA → mtls', () => {
  const open = buildAgentCard(manifest('x.'), { ...opts, security: { bearer: false, clientCert: false } }) as any;
  assert.is(open.securitySchemes, undefined);
  const mtls = buildAgentCard(manifest('x.'), { ...opts, security: { bearer: false, clientCert: true } }) as any;
  assert.ok(mtls.securitySchemes.mtls.mtlsSecurityScheme);
});

test.run();
