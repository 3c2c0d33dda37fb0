// How a model is asked for FemtoClaw output (docs/agent.md "Output modes"). Three modes, from the one
// that leaves a small model the least to get wrong to the one every server accepts:
//   native       the API's tool calling: a tool call comes back structured, plain `content` is a message
//   json_schema  constrained decoding: the FemtoClaw output schema as `response_format` (OpenAI, vLLM,
//                llama.cpp server, LM Studio, Ollama ≥ 0.5 on /v1)
//   prompt       the protocol in the system prompt only; the model writes the JSON itself
// Every mode ends in the same strict validator: a mode changes what the model is offered, never what
// is accepted. A server that refuses a mode's request makes the endpoint try the next one, never "no
// validation".
import type { ProviderRequest, ProviderResponse } from '../kernel/ports.ts';
import type { FailureRecord } from './chain.ts';

export type OutputMode = 'native' | 'json_schema' | 'prompt';

export const OUTPUT_MODES: readonly OutputMode[] = ['native', 'json_schema', 'prompt'];

/** What the agent gives a provider besides the conversation, so each endpoint can use its own mode. */
export interface FemtoClawContract {
  /** The whole system prompt for a mode (its protocol section differs: docs/agent.md). */
  system(mode: OutputMode): string;
  /** The FemtoClaw output schema (src/femtoclaw/output-schema.ts), sent in json_schema mode. */
  schema: Record<string, unknown>;
  /** Native tool calling allowed (runtime config `agent.native_tools`). */
  native: boolean;
  /** Provider name → its output setting (claw.runtime.yaml `providers.<name>.output`); default `auto`. */
  settings?: Readonly<Record<string, OutputSetting>>;
}

export interface ModelRequest extends ProviderRequest {
  femtoclaw?: FemtoClawContract;
}

export interface ModelResponse extends ProviderResponse {
  /** The mode this answer was produced in; absent from clients that know no modes (then: prompt). */
  mode?: OutputMode;
  /** Providers of the chain that failed before this one answered, in order (the user is told). */
  fallbacks?: FailureRecord[];
  /** Things the user should know about this request (a mode the server refused), one line each. */
  notices?: string[];
}

/** Per-provider choice from claw.runtime.yaml `providers.<name>.output`; `auto` picks by protocol. */
export type OutputSetting = OutputMode | 'auto';

/**
 * The modes an endpoint tries, in order, starting from its setting. `auto`: native first for APIs with
 * tool calling (when allowed), then json_schema where the API has it (OpenAI-compatible only), then
 * prompt. The offline rules provider answers in the prompt form.
 */
export function modesFor(protocol: string, setting: OutputSetting | undefined, nativeAllowed: boolean): OutputMode[] {
  if (protocol === 'custom') return ['prompt'];
  const offered = OUTPUT_MODES.filter((m) => (m === 'native' ? nativeAllowed : m === 'json_schema' ? protocol === 'openai-compatible' : true));
  const start = setting === undefined || setting === 'auto' ? 0 : offered.indexOf(setting);
  return start < 0 ? offered : offered.slice(start);
}
