// The client side of the transports: what `claw send <uri> <method> [params]` and a swarm peer use to
// reach an agent that listens on a URI (docs/transports.md). A scheme → factory table like listen.ts
// (the runtime's is CLIENT_SCHEMES in src/runtime/schemes.ts); each factory loads its adapter lazily.
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { ClawError } from '../protocol/errors.ts';
import { schemeOf } from './listen.ts';
import { nodeCrypto } from '../node/lazy.ts';

/** A fresh transport request_id (a UUID v4, as profile §5 recommends). node:crypto: Node 18 has no global crypto. */
export const newRequestId = (): string => nodeCrypto().randomUUID();

export interface RequestOptions {
  /** Give up after this long: rejects with ClawError('timeout'). Default 30 s. */
  timeoutMs?: number;
  /**
   * The transport-level request_id (the fs file name, the MQTT correlation data). Reuse it to retry
   * a request safely: the agent answers a re-delivered request_id with the stored reply (profile §5).
   * Default: a fresh UUID.
   */
  requestId?: string;
}

export interface TransportClient {
  /** Send one request (or a batch) and wait for its reply. */
  request(message: JsonRpcRequest | JsonRpcRequest[], opts?: RequestOptions): Promise<JsonRpcResponse | JsonRpcResponse[]>;
  /** Send a notification: resolves once it is handed over (no reply comes). */
  notify(message: JsonRpcNotification, opts?: { requestId?: string }): Promise<void>;
  /** Send raw frame text (tests: malformed and oversize frames); the reply, if any, is awaited like request(). */
  sendRaw?(text: string, opts?: RequestOptions & { expectReply?: boolean }): Promise<unknown>;
  /** Agent-initiated notifications (claw.heartbeat…) arriving from now on. */
  onNotification?(fn: (message: JsonRpcNotification) => void): void;
  close(): Promise<void>;
}

export interface ClientOptions {
  /** Relative paths in the URI resolve against this. */
  baseDir: string;
  clock?: Clock;
  log?: Logger;
  secrets?: SecretResolver;
  /** Name of this sender where the transport needs one (fs `reply_to`, MQTT client id). */
  sender?: string;
  /**
   * How long connecting may take (MQTT: CONNACK and the reply subscription). `claw send` passes its
   * --timeout, so a slow link is given what the caller is willing to wait. Default: the transport's own.
   */
  connectTimeoutMs?: number;
}

export type ClientFactory = (uri: string, opts: ClientOptions) => Promise<TransportClient>;

export type ClientTable = Readonly<Record<string, ClientFactory>>;

export async function connectClient(uri: string, opts: ClientOptions, table: ClientTable): Promise<TransportClient> {
  const scheme = schemeOf(uri);
  const factory = scheme && Object.hasOwn(table, scheme) ? table[scheme] : undefined;
  if (!factory) {
    const known = Object.keys(table).map((s) => `${s}:`).join(', ');
    throw new ClawError('usage', `cannot send to "${uri}": unknown transport scheme (known: ${known})`);
  }
  return factory(uri, opts);
}
