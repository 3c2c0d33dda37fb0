// An A2A agent built from the official SDK's server classes (@a2a-js/sdk: DefaultRequestHandler,
// InMemoryTaskStore, the express JSON-RPC and agent-card handlers), for the A2A client's tests: the
// wire our client must speak is the one the SDK answers, not our own reading of the spec.
// The agent answers "echo: <text>" as an artifact after `delayMs`; "slow" waits until canceled; with
// `flood` it misbehaves: artifact updates (appends to one artifact, or new artifacts) until canceled.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
// @ts-ignore express ships no types here; it is the SDK's own dependency
import express from 'express';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

export interface SdkServerOptions {
  /** Advertise and serve only A2A 0.3 (the card carries url / preferredTransport), else 1.0 and 0.3. */
  only03?: boolean;
  streaming?: boolean;
  /** Require `Authorization: Bearer <token>` on the JSON-RPC endpoint. */
  token?: string;
  delayMs?: number;
  /**
   * `events` ends the flood (the task then completes) far past any cap: the SDK's task store copies the whole
   * task at every update, so a client that never stops it would otherwise hang the test, not fail it.
   */
  flood?: { mode: 'append' | 'artifacts'; partBytes: number; events: number };
}

export interface SdkServer {
  url: string;
  cardUrl: string;
  /** Every request the server saw: method, path, headers. */
  seen: { method: string; path: string; headers: Record<string, string | string[] | undefined>; body?: any }[];
  canceled: string[];
  /** How many artifact updates a flood published so far. */
  flooded(): number;
  close(): Promise<void>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });

export async function startSdkServer(o: SdkServerOptions = {}): Promise<SdkServer> {
  const seen: SdkServer['seen'] = [];
  const canceled: string[] = [];
  const running = new Map<string, AbortController>();
  let flooded = 0;
  const app = express();
  app.use(express.json());
  app.use((req: any, _res: any, next: any) => {
    seen.push({ method: req.method, path: req.path, headers: req.headers, body: req.body });
    next();
  });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rpcUrl = `${base}/rpc`;
  const card: any = {
    name: 'sdk-echo',
    description: 'Echoes text',
    version: '1.0.0',
    supportedInterfaces: o.only03
      ? [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' }]
      : [
          { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
          { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
        ],
    capabilities: { streaming: o.streaming === true, pushNotifications: false, extensions: [] },
    securitySchemes: o.token ? { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: '', bearerFormat: '' } } } : {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const text = ctx.userMessage.parts.map((p: any) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const stop = new AbortController();
      running.set(ctx.taskId, stop);
      const status = (state: number, final = false) =>
        bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } as any));
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 1, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [ctx.userMessage], metadata: undefined } as any));
      status(2);
      const artifact = (id: string, value: string, append: boolean, lastChunk = false) =>
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: { artifactId: id, name: 'reply', description: '', parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        } as any);
      if (o.flood) {
        const part = 'x'.repeat(o.flood.partBytes);
        for (; !stop.signal.aborted && flooded < o.flood.events; flooded++) {
          bus.publish(o.flood.mode === 'append' ? artifact('a1', part, flooded > 0) : artifact(`a${flooded}`, part, false));
          await sleep(1);
        }
      } else await sleep(text === 'slow' ? 60_000 : (o.delayMs ?? 50), stop.signal);
      running.delete(ctx.taskId);
      if (stop.signal.aborted) return;
      if (!o.flood) bus.publish(artifact('a1', `echo: ${text}`, false, true));
      status(3, true);
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.push(taskId);
      running.get(taskId)?.abort();
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: 5, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } as any));
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  // A 0.3-only agent publishes the 0.3 card shape: url + preferredTransport, no supportedInterfaces.
  if (o.only03) {
    app.get('/.well-known/agent-card.json', (_req: any, res: any) =>
      res.json({ name: card.name, description: card.description, version: card.version, protocolVersion: '0.3.0', url: rpcUrl, preferredTransport: 'JSONRPC', additionalInterfaces: [{ url: rpcUrl, transport: 'JSONRPC' }], capabilities: { streaming: o.streaming === true }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] }),
    );
  }
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }));
  const rpc = jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } });
  app.use('/rpc', (req: any, res: any, next: any) => {
    if (o.token && req.headers.authorization !== `Bearer ${o.token}`) return res.status(401).set('www-authenticate', 'Bearer').json({ error: 'unauthorized' });
    next();
  }, rpc);
  return {
    url: base,
    cardUrl: `${base}/.well-known/agent-card.json`,
    seen,
    canceled,
    flooded: () => flooded,
    close: () => new Promise<void>((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
