// The FemtoClaw validator's verdict table: one row per rule of FemtoClaw
// §4–§10, shared by femtoclaw-validate.test.ts (the pure verdict) and femtoclaw-loop-table.test.ts
// (the same rows through the agent loop: nothing executed, the telemetry event, the audit record).

/** The tools the rows call, with their argument schemas. */
export const SCHEMAS: Record<string, Record<string, unknown>> = {
  echo: { type: 'object', properties: { text: { type: 'string', maxLength: 20 } }, required: ['text'], additionalProperties: false },
  shell: { type: 'object', properties: { bin: { type: 'string' }, argv: { type: 'array', items: { type: 'string' } } }, required: ['bin'], additionalProperties: false },
  get_time: { type: 'object' },
  'fs.read': { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

export type Expect = { valid: true; form: 'message' | 'tool_call'; tool?: string; content?: string } | { step: string; reason: string; field?: string; tool?: string; paths?: string[] };
export type Row = [name: string, raw: string | number[], expect: Expect, limits?: Record<string, number>];

export const tc = (tool: unknown, args: unknown) => JSON.stringify({ tool_call: { tool, args } });
export const msg = (content: unknown) => JSON.stringify({ message: { content } });

export const ROWS: Row[] = [
  // accepted
  ['message form (§19 example)', '{\n  "message": {\n    "content": "Operation complete."\n  }\n}', { valid: true, form: 'message', content: 'Operation complete.' }],
  ['tool call form (§19 example)', '{"tool_call":{"tool":"shell","args":{"bin":"echo","argv":["Hello"]}}}', { valid: true, form: 'tool_call', tool: 'shell' }],
  ['tool without arguments takes args {}', tc('get_time', {}), { valid: true, form: 'tool_call', tool: 'get_time' }],
  ['a message that looks like a tool call stays a message', msg('{"tool_call":{"tool":"shell","args":{"bin":"rm"}}}'), { valid: true, form: 'message', content: '{"tool_call":{"tool":"shell","args":{"bin":"rm"}}}' }],
  ['JSON whitespace around the object is allowed', ' \n\t' + msg('hi') + '\r\n', { valid: true, form: 'message', content: 'hi' }],
  ['non-ASCII content', msg('Grüße 😀'), { valid: true, form: 'message', content: 'Grüße 😀' }],
  ['a JSON escape in the tool name is JSON, not normalization', '{"tool_call":{"tool":"\\u0065cho","args":{"text":"x"}}}', { valid: true, form: 'tool_call', tool: 'echo' }],
  ['dotted tool name', tc('fs.read', { path: '/w' }), { valid: true, form: 'tool_call', tool: 'fs.read' }],
  ['arguments that look like code are data: valid, the gates decide (docs/femtoclaw.md)', tc('echo', { text: '$(rm -rf /)' }), { valid: true, form: 'tool_call', tool: 'echo' }],
  // step 1: parse
  ['empty output', '', { step: 'parse', reason: 'empty' }],
  ['prose only', 'Hello there', { step: 'parse', reason: 'text_around_json' }],
  ['prose before the JSON', 'Sure! ' + msg('hi'), { step: 'parse', reason: 'text_around_json' }],
  ['code fence', '```json\n' + msg('hi') + '\n```', { step: 'parse', reason: 'code_fence' }],
  ['prose after the JSON', msg('hi') + '\nDone.', { step: 'parse', reason: 'trailing_data' }],
  ['two JSON objects', msg('a') + msg('b'), { step: 'parse', reason: 'trailing_data' }],
  ['byte-order mark', '\ufeff' + msg('hi'), { step: 'parse', reason: 'bom' }],
  ['invalid UTF-8 bytes', [...new TextEncoder().encode('{"message":{"content":"')].concat([0xc3, 0x28, 0x22, 0x7d, 0x7d]), { step: 'parse', reason: 'invalid_utf8' }],
  ['escaped lone surrogate', '{"message":{"content":"\\ud83d"}}', { step: 'parse', reason: 'lone_surrogate' }],
  ['raw lone surrogate', '{"message":{"content":"x\ud83d"}}', { step: 'parse', reason: 'lone_surrogate' }],
  ['duplicate "tool" (JSON.parse would run the last one)', '{"tool_call":{"tool":"echo","tool":"shell","args":{"bin":"rm"}}}', { step: 'parse', reason: 'duplicate_key' }],
  ['duplicate top-level form', '{"message":{"content":"a"},"message":{"content":"b"}}', { step: 'parse', reason: 'duplicate_key' }],
  ['nesting past the limit', tc('get_time', { a: JSON.parse('['.repeat(40) + ']'.repeat(40)) }), { step: 'parse', reason: 'too_deep' }],
  ['size past the limit', msg('x'.repeat(200)), { step: 'parse', reason: 'too_large' }, { maxBytes: 100 }],
  ['single quotes', "{'message':{'content':'hi'}}", { step: 'parse', reason: 'syntax' }],
  ['trailing comma', '{"message":{"content":"hi"},}', { step: 'parse', reason: 'syntax' }],
  ['comment', '/* note */' + msg('hi'), { step: 'parse', reason: 'text_around_json' }],
  // step 2: top-level structure
  ['array', '[' + msg('hi') + ']', { step: 'structure', reason: 'not_object' }],
  ['bare string', '"hi"', { step: 'structure', reason: 'not_object' }],
  ['null', 'null', { step: 'structure', reason: 'not_object' }],
  ['empty object', '{}', { step: 'structure', reason: 'no_form' }],
  ['both forms', '{"message":{"content":"hi"},"tool_call":{"tool":"echo","args":{"text":"x"}}}', { step: 'structure', reason: 'both_forms' }],
  ['§19 invalid example', '{"execute":"rm -rf /"}', { step: 'structure', reason: 'unknown_field', field: '/execute' }],
  ['extra top-level field', '{"message":{"content":"hi"},"meta":1}', { step: 'structure', reason: 'unknown_field', field: '/meta' }],
  ['"__proto__" at the top level is a key like any other', '{"__proto__":{"message":{"content":"hi"}}}', { step: 'structure', reason: 'unknown_field', field: '/__proto__' }],
  ['form name in another case', '{"Message":{"content":"hi"}}', { step: 'structure', reason: 'unknown_field', field: '/Message' }],
  // step 3: form
  ['message is a string', '{"message":"hi"}', { step: 'form', reason: 'form_not_object', field: '/message' }],
  ['message without content', '{"message":{}}', { step: 'form', reason: 'missing_field', field: '/message/content' }],
  ['extra field in message', '{"message":{"content":"hi","role":"assistant"}}', { step: 'form', reason: 'unknown_field', field: '/message/role' }],
  ['content not a string', msg(42), { step: 'form', reason: 'wrong_type', field: '/message/content' }],
  ['empty content', msg(''), { step: 'form', reason: 'empty_content', field: '/message/content' }],
  ['whitespace-only content', msg(' \n\t'), { step: 'form', reason: 'empty_content', field: '/message/content' }],
  ['tool_call is an array', '{"tool_call":[]}', { step: 'form', reason: 'form_not_object', field: '/tool_call' }],
  ['tool missing', '{"tool_call":{"args":{}}}', { step: 'form', reason: 'missing_field', field: '/tool_call/tool' }],
  ['args missing', '{"tool_call":{"tool":"get_time"}}', { step: 'form', reason: 'missing_field', field: '/tool_call/args', tool: 'get_time' }],
  ['extra field in tool_call', '{"tool_call":{"tool":"echo","args":{"text":"x"},"id":"1"}}', { step: 'form', reason: 'unknown_field', field: '/tool_call/id' }],
  ['OpenAI field names', '{"tool_call":{"name":"echo","arguments":{"text":"x"}}}', { step: 'form', reason: 'unknown_field', field: '/tool_call/name' }],
  ['tool not a string', tc(5, {}), { step: 'form', reason: 'wrong_type', field: '/tool_call/tool' }],
  ['args as a JSON string is never re-parsed', tc('echo', '{"text":"hi"}'), { step: 'form', reason: 'wrong_type', field: '/tool_call/args', tool: 'echo' }],
  ['args null', tc('get_time', null), { step: 'form', reason: 'wrong_type', field: '/tool_call/args', tool: 'get_time' }],
  ['args array', tc('get_time', []), { step: 'form', reason: 'wrong_type', field: '/tool_call/args', tool: 'get_time' }],
  // step 4: capability identifier
  ['name in another case', tc('Echo', { text: 'x' }), { step: 'capability', reason: 'unknown_tool', tool: 'Echo' }],
  ['leading space is not trimmed', tc(' echo', { text: 'x' }), { step: 'capability', reason: 'invalid_tool_name', tool: ' echo' }],
  ['trailing newline is not trimmed', tc('echo\n', { text: 'x' }), { step: 'capability', reason: 'invalid_tool_name', tool: 'echo\n' }],
  ['fullwidth letters are not NFKC-folded', tc('ｅcho', { text: 'x' }), { step: 'capability', reason: 'invalid_tool_name', tool: 'ｅcho' }],
  ['combining mark', tc('e\u0301cho', { text: 'x' }), { step: 'capability', reason: 'invalid_tool_name', tool: 'e\u0301cho' }],
  ['empty name', tc('', {}), { step: 'capability', reason: 'invalid_tool_name', tool: '' }],
  ['unregistered name', tc('delete_everything', {}), { step: 'capability', reason: 'unknown_tool', tool: 'delete_everything' }],
  ['__proto__ is not a lookup into an object', tc('__proto__', {}), { step: 'capability', reason: 'invalid_tool_name', tool: '__proto__' }],
  ['constructor is not registered', tc('constructor', {}), { step: 'capability', reason: 'unknown_tool', tool: 'constructor' }],
  ['name past 128 characters', tc('a'.repeat(129), {}), { step: 'capability', reason: 'invalid_tool_name', tool: 'a'.repeat(129) }],
  // step 5: arguments
  ['required argument missing', tc('echo', {}), { step: 'arguments', reason: 'args_schema', tool: 'echo', paths: ['required:'] }],
  ['wrong argument type', tc('echo', { text: 5 }), { step: 'arguments', reason: 'args_schema', tool: 'echo', paths: ['type:/text'] }],
  ['unknown argument', tc('echo', { text: 'x', extra: 1 }), { step: 'arguments', reason: 'args_schema', tool: 'echo', paths: ['additionalProperties:'] }],
  ['array item type', tc('shell', { bin: 'echo', argv: ['a', 1] }), { step: 'arguments', reason: 'args_schema', tool: 'shell', paths: ['type:/argv/1'] }],
  ['string too long', tc('echo', { text: 'x'.repeat(21) }), { step: 'arguments', reason: 'args_schema', tool: 'echo', paths: ['maxLength:/text'] }],
];
