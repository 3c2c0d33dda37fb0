// Provider auth types of spec §5.2 not covered by the per-protocol tests: `oauth2` (secret_ref holds an
// access token, sent as a bearer token — docs/providers.md; no OAuth flow is run) and `none` (no
// credential header at all), for both HTTP protocols, against the real fake HTTP server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChain } from '../../src/provider/chain.ts';
import { anthropicBodyText, openaiJson, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { SECRET, prov, setup, signal, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const protocols = {
  'openai-compatible': () => ({ spec: { protocol: 'openai-compatible', endpoint: `${llm.url}/v1`, model: 'm' }, reply: { json: openaiJson({ content: 'ok' }) } }),
  'anthropic-native': () => ({ spec: { protocol: 'anthropic-native', endpoint: llm.url, model: 'm' }, reply: { body: anthropicBodyText({ text: 'ok' }) } }),
};

for (const [name, make] of Object.entries(protocols)) {
  test(`${name}: oauth2 sends the secret_ref's token as Authorization: Bearer, and no api key header`, async () => {
    const p = make();
    llm.queue(p.reply);
    const { deps } = setup([prov('p', { ...p.spec, auth: { type: 'oauth2', secret_ref: 'LLM_KEY' } })]);
    const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
    assert.is(r.text, 'ok');
    const h = llm.requests[0]!.headers;
    assert.is(h.authorization, `Bearer ${SECRET}`);
    assert.equal([h['api-key'], h['x-api-key']], [undefined, undefined]);
  });

  test(`${name}: auth none sends no credential header`, async () => {
    const p = make();
    llm.queue(p.reply);
    const { deps } = setup([prov('p', { ...p.spec, auth: { type: 'none' } })]);
    await createChain(deps).complete({ messages: [user('x')], signal: signal() });
    const h = llm.requests[0]!.headers;
    assert.equal([h.authorization, h['api-key'], h['x-api-key']], [undefined, undefined, undefined]);
  });
}

test.run();
