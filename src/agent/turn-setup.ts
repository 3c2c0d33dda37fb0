// What a turn over a set of tools needs besides the conversation: the system prompt, the tool
// definitions sent to providers with native tool calling, and the FemtoClaw validator and correction
// over exactly those tools. The agent's own turns (service.ts) and a composite tool's sub-turn
// (composite.ts) build it here, once per tool set, not once per turn.
import type { ProviderClient, ToolDefinition } from '../kernel/ports.ts';
import { validateOutput } from '../femtoclaw/validate.ts';
import { correctionFor, NATIVE_SHAPE } from '../femtoclaw/correction.ts';
import { femtoclawOutputSchema } from '../femtoclaw/output-schema.ts';
import type { FemtoClawContract, ModelRequest, ModelResponse, OutputMode, OutputSetting } from '../provider/output-mode.ts';
import { buildSystemPrompt, type PromptInputs } from './prompt.ts';
import { turnListener } from './stream.ts';
import type { AgentToolInfo } from './service.ts';
import type { LoopDeps } from './types.ts';

export interface TurnSetupInputs extends Omit<PromptInputs, 'tools'> {
  tools: AgentToolInfo[];
  /** Send tool definitions to providers with native tool calling (runtime config `agent.native_tools`). */
  nativeTools: boolean;
  /** Provider name → output mode (claw.runtime.yaml `providers`); default `auto`. */
  outputModes?: Readonly<Record<string, OutputSetting>>;
  redact(s: string): string;
}

export type TurnSetup = Pick<LoopDeps, 'systemPrompt' | 'validate' | 'correction'> & {
  /** `complete` for LoopDeps: the request carries the tool definitions when native tools are on. */
  completeWith(provider: ProviderClient): LoopDeps['complete'];
};

export function turnSetup(i: TurnSetupInputs): TurnSetup {
  const registry = new Map(i.tools.map((t) => [t.name, t.check]));
  const names = i.tools.map((t) => t.name);
  const definitions: ToolDefinition[] | undefined =
    i.nativeTools && i.tools.length > 0 ? i.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })) : undefined;
  // One prompt per output mode, built on first use: the endpoint picks the one for the mode it uses.
  const prompts = new Map<OutputMode, string>();
  const system = (mode: OutputMode) => prompts.get(mode) ?? prompts.set(mode, buildSystemPrompt(i, mode)).get(mode)!;
  const femtoclaw: FemtoClawContract = { system, schema: femtoclawOutputSchema(i.tools), native: i.nativeTools, ...(i.outputModes ? { settings: i.outputModes } : {}) };
  return {
    systemPrompt: system('prompt'),
    validate: (raw) => validateOutput(raw, registry),
    correction: (r, mode) => correctionFor(r, { tools: names, redact: i.redact, ...(mode === 'native' ? { shape: NATIVE_SHAPE } : {}) }),
    completeWith: (provider) => async (messages, signal) => {
      const onDelta = turnListener(signal);
      const req: ModelRequest = { messages, tools: definitions, signal, femtoclaw, ...(onDelta ? { onDelta } : {}) };
      const r: ModelResponse = await provider.complete(req);
      return r;
    },
  };
}
