// `claw send <uri> <method> [params-json]`: one JSON-RPC request to an agent listening on a transport
// (docs/transports.md). The reply is printed as one JSON line on stdout.
// Exit codes: 0 result, 1 error reply, 2 usage, 3 no reply within --timeout, 4 transport failure.
import { parseArgs } from './args.ts';
import { SEND_HELP } from './help.ts';
import type { CliEnv } from './env.ts';
import { ClawError } from '../protocol/errors.ts';
import { newRequestId, type TransportClient } from '../transports/client.ts';
import { composeRuntime } from '../runtime/compose.ts';
import type { JsonRpcResponse } from '../protocol/jsonrpc.ts';

export const SEND_EXIT = { result: 0, error: 1, usage: 2, timeout: 3, transport: 4 } as const;

export async function sendCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['notify'], values: ['timeout', 'request-id', 'id', 'reply-to'] });
  if (args.flags.has('help')) {
    env.stdout.write(SEND_HELP);
    return 0;
  }
  const [uri, method, paramsText, ...more] = args.positionals;
  if (!uri || !method || more.length > 0) throw new ClawError('usage', 'expected <uri> <method> [params-json]');
  let params: unknown;
  if (paramsText !== undefined) {
    try {
      params = JSON.parse(paramsText);
    } catch (e) {
      throw new ClawError('usage', `params is not JSON: ${(e as Error).message}`);
    }
    if (typeof params !== 'object' || params === null) throw new ClawError('usage', 'params must be a JSON object or array');
  }
  const timeoutText = args.values.get('timeout')?.[0];
  const timeoutMs = timeoutText === undefined ? 30_000 : Number(timeoutText);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new ClawError('usage', '--timeout must be a positive integer (ms)');
  const requestId = args.values.get('request-id')?.[0];
  if (requestId !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(requestId)) {
    throw new ClawError('usage', '--request-id must be 1-128 characters of A-Z a-z 0-9 _ . - (not starting with . or -)');
  }
  const idText = args.values.get('id')?.[0];

  // No runtime configuration: a password_ref resolves from the environment and $CLAW_SECRETS_DIR (profile §7).
  const runtime = composeRuntime({ host: env, config: {} });
  // --timeout is the whole wait, connecting included: a slow link gets the time the caller allows, and
  // the reply gets what connecting left over. Monotonic: a wall-clock step meanwhile (docs/boards.md "Clock") is no time spent.
  const deadline = env.clock.monotonic() + timeoutMs;
  let client: TransportClient | undefined;
  const rid = requestId ?? newRequestId();
  try {
    client = await runtime.connect(uri, { sender: args.values.get('reply-to')?.[0], connectTimeoutMs: timeoutMs });
    const base = { jsonrpc: '2.0' as const, method, ...(params === undefined ? {} : { params: params as Record<string, unknown> }) };
    if (args.flags.has('notify')) {
      await client.notify(base, { requestId });
      return SEND_EXIT.result;
    }
    // The JSON-RPC id defaults to the request_id, so a reply file and its id tell the same story.
    const id = idText === undefined ? rid : /^-?\d+$/.test(idText) ? Number(idText) : idText;
    const reply = (await client.request({ ...base, id }, { timeoutMs: Math.max(1, deadline - env.clock.monotonic()), requestId: rid })) as JsonRpcResponse | JsonRpcResponse[];
    env.stdout.write(`${JSON.stringify(reply)}\n`);
    return !Array.isArray(reply) && 'error' in reply ? SEND_EXIT.error : SEND_EXIT.result;
  } catch (e) {
    if (e instanceof ClawError && e.code === 'usage') throw e;
    const timedOut = e instanceof ClawError && e.code === 'timeout';
    // The whole --timeout, not the share connecting left for the reply: that is the figure the operator chose.
    const why = timedOut ? `no reply to request_id ${rid} within ${timeoutMs} ms` : e instanceof Error ? e.message : String(e);
    env.stderr.write(`claw send: ${why}\n`);
    return timedOut ? SEND_EXIT.timeout : SEND_EXIT.transport;
  } finally {
    await client?.close();
  }
}
