// Gate 5: provider quota (spec §5.2 limits.tokens_per_day, seed TV-L2-10). A tool call is the action
// of a model turn, so it is charged to the agent's primary provider (docs/tools.md): when that
// provider's daily token budget is spent, the call is refused with -32021.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { GateDeps, ToolCall } from './call.ts';

export async function quotaGate(call: ToolCall, deps: GateDeps): Promise<void> {
  const p = deps.chargedProvider;
  const limit = p?.spec.limits?.tokens_per_day;
  if (!p || typeof limit !== 'number') return;
  const used = await deps.ledger.usedToday(p.name);
  if (used >= limit) {
    throw new ProtocolError(ErrorCode.ProviderQuotaExceeded, `Provider quota exceeded: ${p.name} used ${used} of ${limit} tokens today`, {
      provider: p.name,
      tool: call.tool.name,
      tokens_per_day: limit,
      used,
    });
  }
}
