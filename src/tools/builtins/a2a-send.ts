// `a2a-send`: { peer: string, text: string, context_id?: string } → the reply of a remote A2A agent named in
// claw.runtime.yaml `a2a.peers` (docs/a2a.md "Client"). Being a tool call, it passes every gate a tool call
// does (schema, policy, rate limits, approval, audit); the request itself goes through the network guard
// under the tool's sandbox network rules (mode, allowed_hosts, SSRF). Refusals are sandbox violations
// (-32010), as for http-fetch. In-process: the runtime holds the peers' credentials, never a worker.
import { SandboxViolation, textResult, type ToolResult } from '../types.ts';
import { netMode } from '../../sandbox/spec-view.ts';
import type { BuiltinDef } from './def.ts';

export const a2aSend: BuiltinDef = {
  name: 'a2a-send',
  touchesOs: false,
  inputSchema: {
    type: 'object',
    properties: {
      peer: { type: 'string', minLength: 1 },
      text: { type: 'string', minLength: 1 },
      context_id: { type: 'string', minLength: 1, maxLength: 200 },
    },
    required: ['peer', 'text'],
  },
  async run(args, ctx): Promise<ToolResult> {
    if (typeof args.peer !== 'string' || typeof args.text !== 'string') return textResult('a2a-send needs "peer" and "text"', true);
    const port = ctx.a2a;
    if (!port) throw new SandboxViolation('a2a.unconfigured', 'a2a-send: no peers are configured (claw.runtime.yaml a2a.peers)');
    if (!port.has(args.peer)) throw new SandboxViolation('a2a.peer', `a2a-send: peer "${args.peer.slice(0, 64)}" is not in a2a.peers`);
    const mode = netMode(ctx.sandbox);
    if (mode === 'deny') throw new SandboxViolation('network.mode', 'the sandbox denies network access');
    const r = await port.send(args.peer, args.text, {
      network: { ...ctx.sandbox.capabilities?.network, mode },
      signal: ctx.signal,
      timeoutMs: ctx.timeoutMs,
      contextId: typeof args.context_id === 'string' ? args.context_id : undefined,
    });
    if (!r.ok) return textResult(`a2a-send to ${args.peer}: ${r.error}`, true);
    const meta = `[a2a peer=${args.peer} agent=${r.agent} state=${r.state}${r.contextId ? ` context_id=${r.contextId}` : ''}${r.taskId ? ` task_id=${r.taskId}` : ''}]`;
    const content: ToolResult['content'] = [{ type: 'text', text: r.text }, { type: 'text', text: meta }];
    return r.state === 'completed' ? { content } : { content, isError: true };
  },
};
