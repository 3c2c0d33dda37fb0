// bindTools (src/tools/registry.ts; docs/tools.md "Binding").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bindTools, ToolBindingError, type McpBinder } from '../../src/tools/registry.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';
import { fakeFetch, fakeImpl, fakeRunner, ok } from './helpers/gate-fakes.ts';

const deps = (mcp?: McpBinder) => ({ builtins: { run: fakeRunner(), fetch: fakeFetch(), cwdFor: () => '/tmp' }, run: fakeRunner(), resolveSecrets: async () => ({}), ...(mcp ? { mcp } : {}) });
const tool = (name: string, spec: Record<string, unknown> = {}) => primitive('Tool', name, { description: 'd', input_schema: { type: 'object' }, ...spec });
const m = (...tools: any[]) => makeManifest(2, { tools });

test('builtin by name, builtin alias, exec binding; fields copied from the manifest', async () => {
  const r = await bindTools(m(tool('echo', { timeout_ms: 50, annotations: { readOnlyHint: true }, sandbox_ref: 's1', policy_ref: 'pol1' }), tool('say'), tool('weather')), { tools: { say: { builtin: 'echo' }, weather: { exec: { bin: '/bin/w', argv: ['{{c}}'] } } } } as any, deps());
  const e = r.get('echo')!.bound;
  assert.equal({ ...e, impl: e.impl.kind }, { name: 'echo', description: 'd', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true }, category: undefined, timeoutMs: 50, sandboxRef: 's1', policyRef: 'pol1', impl: 'builtin' });
  assert.equal(await r.get('say')!.bound.impl.run({ text: 'hi' }, { signal: new AbortController().signal, requestId: 'r', sandbox: { level: 'none' } }), ok('hi'));
  assert.is(r.get('weather')!.bound.impl.kind, 'exec');
  assert.is(r.get('weather')!.bound.impl.commandLine!({ c: 'x' }, { level: 'none' }), '/bin/w x');
});

test('MCP: description / input_schema from the server only when absent; mcp_source wins over a tools entry', async () => {
  const bound: string[] = [];
  const mcp: McpBinder = { bind: async (t) => (bound.push(t.name), { impl: fakeImpl(async () => ok('m'), { kind: 'mcp' }), description: 'server desc', inputSchema: { type: 'object', required: ['q'] } }), close: async () => {} };
  const r = await bindTools(m(primitive('Tool', 'a', { mcp_source: 'claw://local/mcp/x' }), tool('b', { mcp_source: 'claw://local/mcp/x', description: 'mine', input_schema: { type: 'object' } })), { tools: { b: { builtin: 'echo' } } } as any, deps(mcp));
  assert.equal(bound, ['a', 'b']);
  assert.is(r.get('a')!.bound.description, 'server desc');
  assert.equal(r.get('a')!.check({}).map((i) => i.keyword), ['required']);
  assert.is(r.get('b')!.bound.description, 'mine');
  assert.equal(r.get('b')!.check({}), []);
  assert.is(r.get('b')!.bound.impl.kind, 'mcp');
  try {
    await bindTools(m(primitive('Tool', 'a', { mcp_source: 'x' })), {} as any, deps());
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'tool a: MCP tools are not available in this runtime');
  }
});

test('unbound tool: one error naming tools.<name>, all problems together', async () => {
  try {
    await bindTools(m(tool('nope'), tool('echo'), tool('zip')), {} as any, deps());
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ToolBindingError);
    const msg = (e as Error).message;
    assert.is(msg.split('; ').length, 2);
    assert.ok(msg.startsWith('tool nope has no implementation: give it an mcp_source, or bind it in claw.runtime.yaml under tools.nope (builtin: one of echo, shell, file-read, file-write, http-fetch, mqtt-publish, mqtt-read, a2a-send, or exec: {bin, argv})'), msg);
    assert.ok(msg.includes('under tools.zip'));
  }
});

test('a tool named like an Object.prototype member (valid name "constructor") binds to garbage instead of failing', async () => {
  let err: unknown;
  try {
    await bindTools(m(tool('constructor')), {} as any, deps());
  } catch (e) {
    err = e;
  }
  assert.instance(err, ToolBindingError);
});

test('an unusable input_schema is not refused at binding (it fails or misbehaves at call time)', async () => {
  for (const input_schema of [{ $ref: '#/$defs/missing' }, { type: 42 }]) {
    let err: unknown;
    try {
      await bindTools(m(tool('echo', { input_schema })), {} as any, deps());
    } catch (e) {
      err = e;
    }
    assert.instance(err, ToolBindingError, JSON.stringify(input_schema));
  }
});

test.run();
