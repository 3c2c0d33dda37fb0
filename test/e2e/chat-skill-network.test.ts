// Skill permissions (spec §5.5) end to end: `permissions.network: false` narrows the sandbox of the tool
// calls made for that skill, and only those. The agent's sandbox allows the network (loopback included);
// two tools are bound to the http-fetch builtin: `fetch-skill` (required by a skill that forbids the
// network) and `fetch-free` (no skill). The model asks both to fetch a local HTTP target: only the
// skill-less call reaches it. (chat.test.ts covers `filesystem` and `approval_required`.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeLlm, openaiJson, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, removeAgents, chat, auditRecords, openaiProvider, msg, call } from './chat-helpers.ts';

let llm: FakeLlm;
let target: Server;
let targetUrl = '';
const hits: string[] = [];

test.before(async () => {
  llm = await startFakeLlm();
  target = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('TARGET-BODY');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
});
test.after(async () => {
  await llm.close();
  await new Promise<void>((r) => target.close(() => r()));
  removeAgents();
});

const URL_SCHEMA = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false };

test('permissions.network false: the skill\'s tool call cannot reach the network; the same builtin outside the skill can', async () => {
  const a = makeAgent({
    providers: [openaiProvider(llm.url)],
    tools: [
      { name: 'fetch-skill', description: 'Fetches a URL for the offline skill', input_schema: URL_SCHEMA },
      { name: 'fetch-free', description: 'Fetches a URL', input_schema: URL_SCHEMA },
    ],
    skills: [{ name: 'offline-only', description: 'd', instruction: 'INSTR-offline', tools_required: ['fetch-skill'], permissions: { network: false } }],
    runtime: {
      tools: {
        'careful-write': { builtin: 'file-write' },
        'forbidden-write': { builtin: 'file-write' },
        'fetch-skill': { builtin: 'http-fetch' },
        'fetch-free': { builtin: 'http-fetch' },
      },
    },
  });
  // The agent's own sandbox lets the network through, loopback included, so only the skill can forbid it.
  const file = join(a.dir, 'claw.yaml');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.spec.sandbox.inline.capabilities.network = { mode: 'allow-all', ssrf_protection: { enabled: false } };
  writeFileSync(file, JSON.stringify(m, null, 2));

  llm.queue(
    { json: openaiJson({ content: call('fetch-skill', { url: `${targetUrl}/from-skill` }) }) },
    { json: openaiJson({ content: msg('REPLY-1') }) },
    { json: openaiJson({ content: call('fetch-free', { url: `${targetUrl}/free` }) }) },
    { json: openaiJson({ content: msg('REPLY-2') }) },
  );
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-1', 'REPLY-2']);
  assert.equal(hits, ['/free'], 'only the call outside the skill reached the target');

  const result = (i: number) => JSON.parse(llm.requests[i]!.body.messages.at(-1).content).tool_result;
  const refused = result(1);
  assert.equal([refused.tool, refused.ok, refused.error.code], ['fetch-skill', false, -32010]);
  assert.is(refused.error.message, 'Sandbox denied: the sandbox denies network access');
  const free = result(3);
  assert.equal([free.tool, free.ok], ['fetch-free', true]);
  assert.ok(free.content.includes('TARGET-BODY'), free.content);

  const rec = auditRecords(a);
  const req = rec.filter((x) => x.kind === 'capability.requested').map((x) => [x.data.tool, x.data.skill]);
  assert.equal(req, [['fetch-skill', 'offline-only'], ['fetch-free', undefined]]);
});

test.run();
