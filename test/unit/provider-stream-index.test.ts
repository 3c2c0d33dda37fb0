// A streamed tool call names its slot by index. A hostile or broken server that sends a huge, negative or
// fractional index gets a malformed-response failure at once: kept as an array index, 2³² - 2 made the pass
// that picks the first call visit four billion holes (the event loop stalled for hours).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openaiStream, parseOpenai } from '../../src/provider/openai.ts';
import { anthropicStream, parseAnthropic } from '../../src/provider/anthropic.ts';
import { ProviderFailure } from '../../src/provider/failure.ts';

const BAD = [4294967294, 2 ** 31, 256, -1, 1.5];

function refused(run: () => void, what: string): void {
  const t = Date.now();
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  assert.ok(Date.now() - t < 1000, `${what}: answered in ${Date.now() - t} ms`);
  assert.instance(err, ProviderFailure, `${what}: ${String(err)}`);
  assert.is((err as ProviderFailure).reason, 'malformed');
}

test('OpenAI-compatible stream: a tool_calls index out of 0..255 is malformed, answered at once', () => {
  for (const index of BAD) {
    refused(() => {
      const d = openaiStream(() => {});
      d.event({ event: 'message', data: JSON.stringify({ choices: [{ delta: { tool_calls: [{ index, id: 'c', function: { name: 'echo', arguments: '{}' } }] } }] }) });
      d.event({ event: 'message', data: '[DONE]' });
      d.finish();
    }, `index ${index}`);
  }
  // The largest index allowed still works, and the call in it is the first one.
  const d = openaiStream(() => {});
  d.event({ event: 'message', data: JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 255, id: 'c', function: { name: 'echo', arguments: '{}' } }] } }] }) });
  d.event({ event: 'message', data: '[DONE]' });
  assert.equal(d.finish().toolCall, { id: 'c', name: 'echo', arguments: '{}' });
});

test('Anthropic stream: a tool_use block index out of 0..255 is malformed, answered at once', () => {
  for (const index of BAD) {
    refused(() => {
      const d = anthropicStream(() => {});
      d.event({ event: 'content_block_start', data: JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: 't', name: 'echo', input: {} } }) });
      d.event({ event: 'message_stop', data: JSON.stringify({ type: 'message_stop' }) });
      d.finish();
    }, `index ${index}`);
  }
});

test('Anthropic stream: an input_json_delta index that is not 0..255 ("__proto__" included) is malformed; Array.prototype stays clean', () => {
  for (const index of ['__proto__', 'constructor', -1, 4294967294]) {
    refused(() => {
      const d = anthropicStream(() => {});
      d.event({ event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: 'polluted' } }) });
    }, `index ${String(index)}`);
  }
  assert.not.ok('args' in Array.prototype, 'Array.prototype.args was written');
});

test('many tool calls whose arguments are JSON values: the first call is cut out once, not every call from the whole text', () => {
  const value = { note: 'x'.repeat(15_000) };
  const n = 256;
  const within = (what: string, run: () => { toolCall?: { arguments: string }; toolCallCount: number }) => {
    const t = Date.now();
    const r = run();
    assert.ok(Date.now() - t < 1500, `${what}: ${Date.now() - t} ms`);
    assert.is(r.toolCallCount, what === 'openai stream' ? 1 : n);
    // A streamed call's fragments are joined: here the same value sent by each of the chunk's entries.
    assert.is(r.toolCall?.arguments, JSON.stringify(value).repeat(what === 'openai stream' ? n : 1));
  };
  within('openai stream', () => {
    const d = openaiStream(() => {});
    d.event({ event: 'message', data: JSON.stringify({ choices: [{ delta: { tool_calls: Array.from({ length: n }, (_, k) => ({ index: 0, ...(k === 0 ? { id: 'c' } : {}), function: { ...(k === 0 ? { name: 'echo' } : {}), arguments: value } })) } }] }) });
    d.event({ event: 'message', data: '[DONE]' });
    return d.finish();
  });
  within('openai body', () =>
    parseOpenai(JSON.stringify({ choices: [{ message: { content: null, tool_calls: Array.from({ length: n }, (_, k) => ({ id: `c${k}`, function: { name: 'echo', arguments: value } })) } }] })),
  );
  within('anthropic body', () => parseAnthropic(JSON.stringify({ content: Array.from({ length: n }, (_, k) => ({ type: 'tool_use', id: `t${k}`, name: 'echo', input: value })) })));
});

test.run();
