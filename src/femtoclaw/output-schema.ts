// The FemtoClaw output (seed §4–§6) as one JSON Schema, for servers that constrain decoding to a schema
// (OpenAI structured outputs, vLLM, llama.cpp server, LM Studio, Ollama `format`). It only makes the
// valid answer the easy one for the model: the output still goes through validateOutput, which stays
// the authority (a server may ignore or only loosely follow the schema).
export interface SchemaTool {
  name: string;
  input_schema?: Record<string, unknown>;
}

/**
 * `{"message":{"content":…}}` or `{"tool_call":{"tool":<one registered name>,"args":<its input_schema>}}`,
 * nothing else. One branch per tool, so each name comes with its own arguments schema; with no tools the
 * message form is the only one.
 */
export function femtoclawOutputSchema(tools: readonly SchemaTool[]): Record<string, unknown> {
  const message = {
    type: 'object',
    properties: { message: { type: 'object', properties: { content: { type: 'string', minLength: 1 } }, required: ['content'], additionalProperties: false } },
    required: ['message'],
    additionalProperties: false,
  };
  if (tools.length === 0) return message;
  const calls = tools.map((t) => ({
    type: 'object',
    properties: { tool: { type: 'string', enum: [t.name] }, args: t.input_schema ?? { type: 'object' } },
    required: ['tool', 'args'],
    additionalProperties: false,
  }));
  const toolCall = {
    type: 'object',
    properties: { tool_call: calls.length === 1 ? calls[0] : { anyOf: calls } },
    required: ['tool_call'],
    additionalProperties: false,
  };
  // `type: object` at the root as well: OpenAI wants an object root, grammar converters accept anyOf under it.
  return { type: 'object', anyOf: [message, toolCall] };
}
