// The CKP-A2A profile as a kernel module (docs/a2a.md): on each HTTP listener it serves the agent card
// (public), the A2A JSON-RPC endpoint and the HTTP+JSON binding below it (the listener's credentials); it adds claw.task.* to the CKP
// methods. Routes are added once, when the runtime is built; they answer 503 / "not running" until a
// session starts, and the card and tasks follow the session's manifest.
import type { KernelModule, Session } from '../kernel/agent.ts';
import type { Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ChannelAgent } from '../channels/types.ts';
import type { HttpTransport } from '../transports/http/transport.ts';
import { taskMethods } from './task-methods.ts';
import { buildAgentCard } from './card.ts';
import { AGENT_CARD_PATH, agentCardRoute } from './card-route.ts';
import { a2aRestRoute } from './rest-route.ts';
import { a2aRpcRoute } from './rpc-route.ts';
import { StreamSlots, streamLimitsFor } from './stream.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, TaskService } from './tasks.ts';
import type { TaskStore } from './task-store.ts';
import type { ChannelGate } from '../channels/access.ts';
import type { ChannelSpec } from '../channels/types.ts';
import { a2aChannelOf, createA2aAccess, type A2aAccess } from './access.ts';
import { ClawError } from '../protocol/errors.ts';

export const DEFAULT_A2A_PATH = '/a2a';

export interface A2aModuleDeps {
  config: RuntimeConfig;
  log: Logger;
  /** The HTTP listeners: each serves the card and the endpoint. */
  listeners: readonly HttpTransport[];
  getAgent: () => ChannelAgent | undefined;
  /** Opened at each session start: the memory database's table when the session has one, else the data_dir file. */
  openStore: () => Promise<TaskStore>;
  newId: () => string;
  now: () => number;
  /** Monotonic ms: finished tasks' ages (retention, tasks.ts). */
  monotonic?: () => number;
  runtimeVersion: string;
  /** The access gate of the A2A channel (channels/access.ts, with its pairing store), opened at session start. */
  openGate: (channel: string, spec: ChannelSpec) => ChannelGate;
  approvals?: {
    decide(requestId: string, decision: 'approved' | 'denied', reason?: string): Promise<unknown> | unknown;
    settled(requestId: string): Promise<unknown> | undefined;
  };
}

/**
 * `notifications`: a transport that only listens, added to the runtime's transports: claw.tool.approval_requested
 * announced inside an A2A turn puts its task in input_required (tasks.ts onNotification).
 */
export function a2aModule(d: A2aModuleDeps): KernelModule & { notifications: Transport } {
  const c = d.config.a2a ?? {};
  const path = c.path ?? DEFAULT_A2A_PATH;
  // No trailing slash (runtime-config.ts): the JSON-RPC route is `path`, the HTTP+JSON binding below `path/`.
  const prefix = path;
  let session: Session | undefined;
  let service: TaskService | undefined;
  let access: A2aAccess | undefined;
  for (const l of d.listeners) {
    // The A2A routes take `path` and every path below it: none may overlap another route of the listener.
    for (const [name, taken] of [[`the CKP endpoint of ${l.url}`, new URL(l.url).pathname], ['the health probe', '/healthz'], ['the agent card', '/.well-known']]) {
      if (`${taken}/`.startsWith(`${prefix}/`) || `${prefix}/`.startsWith(`${taken}/`)) throw new ClawError('usage', `a2a.path "${path}" collides with ${name} (${taken}): choose another a2a.path`);
    }
    // The card names the endpoint on the listener it was fetched from (or public_url, behind a proxy).
    const base = c.public_url?.replace(/\/$/, '') ?? new URL(l.url).origin;
    l.addRoute(AGENT_CARD_PATH, agentCardRoute(() => (session ? buildAgentCard(session.manifest, { endpointUrl: `${base}${path}`, runtimeVersion: d.runtimeVersion, security: l.security }) : undefined)));
    // One count of open streams per listener, whichever binding opened them.
    const slots = new StreamSlots(streamLimitsFor(l.limits.maxConnections));
    // A body need not be much larger than the largest message (base64 is 4/3 of the bytes, plus the envelope):
    // the listener's cap is for operators' requests, and every byte of a body is parsed before any check.
    const limits = { ...l.limits, maxBodyBytes: Math.min(l.limits.maxBodyBytes, Math.ceil(((c.max_message_bytes ?? DEFAULT_MAX_MESSAGE_BYTES) * 4) / 3) + 64 * 1024) };
    l.addRoute(path, a2aRpcRoute({ tasks: () => service, slots, ...limits }));
    l.addRoute(`${prefix}/`, a2aRestRoute({ tasks: () => service, slots, prefix, ...limits }));
  }
  if (d.listeners.length === 0) d.log.warn('a2a is enabled but no http listener is configured: nothing serves it');
  const ap = d.approvals;
  return {
    notifications: {
      name: 'a2a-tasks',
      start() {},
      notify(n) {
        if ('method' in n) service?.onNotification(n);
      },
      closed: new Promise(() => {}),
      close: async () => {},
    },
    name: 'a2a',
    methods: taskMethods(() => service, d.newId),
    async start(s) {
      // Profile §8: a caller is a user of the manifest's webhook Channel; none declared, nothing is served.
      const ch = a2aChannelOf(s.manifest);
      const acc = createA2aAccess({ channel: ch.name, gate: d.openGate(ch.name, ch.spec), policies: s.manifest.policies, log: d.log });
      const store = await d.openStore();
      const svc = new TaskService({ store, getAgent: d.getAgent, tools: c.tools === true, newId: d.newId, now: d.now, monotonic: d.monotonic, log: d.log, maxTasks: c.max_tasks, maxAgeMs: c.max_task_age_ms,
        maxTasksPerCaller: c.max_tasks_per_caller, maxConcurrent: c.max_concurrent_tasks, maxMessageBytes: c.max_message_bytes,
        access: () => access,
        ...(ap ? { decide: async (id, decision, reason) => void (await ap.decide(id, decision, reason)), approvalSettled: ap.settled } : {}) });
      await svc.open();
      service = svc;
      access = acc;
      session = s;
      d.log.info('a2a serving', { path, channel: ch.name, access: ch.spec.access_control?.mode ?? 'allowlist', card: AGENT_CARD_PATH, listeners: d.listeners.length, tools: c.tools === true, tasks: store.kind });
    },
    async stop() {
      const svc = service;
      service = undefined;
      access = undefined;
      session = undefined;
      await svc?.close();
    },
  };
}
