// Channel shapes and the port channels use to reach the agent (spec §5.3; docs/channels.md).
import type * as v from 'valibot';
import type { channelSpec } from '../manifest/schema/channel.ts';
import type { TurnResult } from '../agent/types.ts';

export type ChannelSpec = v.InferOutput<typeof channelSpec>;
export type AccessControl = NonNullable<ChannelSpec['access_control']>;
export type Role = 'admin' | 'user' | 'viewer';
export type OverlapPolicy = 'skip' | 'queue' | 'allow';

/**
 * What a channel asks of the agent for one turn. `conversation` keeps each channel user's history apart
 * (a user never sees another user's messages in the model's context); `tools: false` runs the turn
 * with no tool available (role `viewer`, spec §5.3 "cannot trigger tools or skills").
 */
export interface ChannelTurnOptions {
  channel: string;
  user: string;
  conversation: string;
  tools: boolean;
}

/** The agent service as channels see it (src/agent/service.ts AgentService plus per-turn options). */
export interface ChannelAgent {
  turn(text: string, signal: AbortSignal, opts?: ChannelTurnOptions): Promise<TurnResult>;
  /**
   * true when the service honours ChannelTurnOptions. Without it a viewer (tools off) and a second
   * user (own conversation) cannot be served safely, so the channel refuses them (docs/channels.md).
   */
  readonly channelTurns?: boolean;
}

export type GetAgent = () => ChannelAgent | undefined;
