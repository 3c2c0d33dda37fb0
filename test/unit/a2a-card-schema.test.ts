// The agent card against the A2A JSON Schemas (test/fixtures/a2a): the 1.0 card (what a 1.0 client gets) and the
// 0.3 card (no A2A-Version) each valid under the schema of the version they declare, with and without security.
// The served card is checked the same way end to end in test/e2e/a2a-stream.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildAgentCard, legacyAgentCard } from '../../src/a2a/card.ts';
import { cardErrors } from '../e2e/helpers/a2a-schema.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

const skill = { ...primitive('Skill', 'daily-report', { description: 'Writes the daily report', tools_required: ['file-write'] }), labels: { team: 'ops' } };
const m = makeManifest(1, { identity: primitive('Identity', 'edge', { personality: 'You watch the greenhouse.' }), skills: [skill] });

for (const security of [{ bearer: true, clientCert: true }, { bearer: false, clientCert: false }]) {
  test(`1.0 and 0.3 cards are valid under their schemas (bearer ${security.bearer}, mTLS ${security.clientCert})`, () => {
    const card = buildAgentCard(m, { endpointUrl: 'https://agent.example/a2a', runtimeVersion: '0.1.0', security });
    assert.equal(cardErrors(card, '1.0'), []);
    const old = legacyAgentCard(card) as any;
    assert.equal(cardErrors(old, '0.3'), []);
    assert.is(old.url, 'https://agent.example/a2a');
    assert.is(old.preferredTransport, 'JSONRPC');
    assert.equal(old.additionalInterfaces, [{ url: 'https://agent.example/a2a', transport: 'JSONRPC' }]);
    if (security.bearer) assert.equal(old.securitySchemes.bearer.type, 'http');
  });
}

test('the validators catch what is wrong: a field 1.0 does not have, a 0.3 card missing url', () => {
  const card = buildAgentCard(m, { endpointUrl: 'https://agent.example/a2a', runtimeVersion: '0.1.0', security: { bearer: true, clientCert: false } });
  assert.ok(cardErrors({ ...card, url: 'https://agent.example/a2a' }, '1.0').length > 0, 'a 0.3 field in a 1.0 card');
  assert.ok(cardErrors({ ...card, capabilities: { streaming: 'yes' } }, '1.0').length > 0);
  // Through $refs: Security Scheme → HTTP Auth Security Scheme.
  assert.ok(cardErrors({ ...card, securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 5 } } } }, '1.0').length > 0);
  assert.ok(cardErrors({ ...card, securitySchemes: { bearer: { type: 'http', scheme: 'Bearer' } } }, '1.0').length > 0, 'a 0.3 scheme');
  const { description: _, ...noDescription } = card;
  assert.ok(cardErrors(noDescription, '1.0').length > 0);
  assert.ok(cardErrors(card, '0.3').length > 0, 'the 1.0 card is not a 0.3 card');
});

test.run();
