// `claw a2a card <url>` and `claw a2a send <url> <text>`: an operator's A2A client (docs/a2a.md "Client").
// Requests go through the network guard like the runtime's own: SSRF refusal unless --allow-private, size
// caps, deadlines. The token (--token-file) is only ever an Authorization header, never printed.
// Exit codes: 0 done (send: the task completed), 1 failure or another final state, 2 usage, 3 timeout.
import { parseArgs } from './args.ts';
import type { CliEnv } from './env.ts';
import { ClawError } from '../protocol/errors.ts';

const HELP = `Usage: claw a2a card <url> [--allow-private] [--timeout S]
       claw a2a send <url> <text> [--token-file F] [--timeout S] [--context ID] [--no-stream] [--json]
                     [--allow-private]

An A2A client. <url> is an agent card (…/.well-known/agent-card.json) or the agent's base URL.
  card   fetches the card, checks its shape and prints it (JSON); stderr names the interface chosen
         (JSON-RPC, A2A 1.0 preferred, else 0.3). Exit 1 when it offers none this client speaks.
  send   sends <text> as one message and follows the task to its end (SSE when the card says
         capabilities.streaming, else polling); prints the reply text (--json: the whole outcome).
         Ctrl-C cancels the remote task (CancelTask).

Options:
  --token-file F    a file holding the bearer token for the agent's endpoint (sent to the card's origin only)
  --timeout S       seconds for the whole exchange (default 120; card: 15)
  --context ID      continue the remote agent's conversation (A2A contextId)
  --no-stream       poll GetTask even when the agent streams
  --allow-private   reach loopback and private addresses (refused by default: SSRF guard)

Exit codes: 0 success (send: task completed), 1 failure or another final state, 2 usage error, 3 timeout.
`;

export async function a2aCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['allow-private', 'no-stream', 'json'], values: ['token-file', 'timeout', 'context'] });
  const [sub, url, text, ...more] = args.positionals;
  if (args.flags.has('help') || sub === undefined || sub === 'help') {
    env.stdout.write(HELP);
    return sub === undefined && !args.flags.has('help') ? 2 : 0;
  }
  if (sub !== 'card' && sub !== 'send') throw new ClawError('usage', `unknown subcommand "${sub}" (card, send)`);
  if (!url || (sub === 'card' ? text !== undefined : text === undefined) || more.length > 0) {
    throw new ClawError('usage', sub === 'card' ? 'expected <url>' : 'expected <url> <text>');
  }
  const timeoutText = args.values.get('timeout')?.[0];
  const seconds = timeoutText === undefined ? (sub === 'card' ? 15 : 120) : Number(timeoutText);
  if (!(seconds > 0) || seconds > 86_400) throw new ClawError('usage', '--timeout must be a number of seconds (0 < S ≤ 86400)');
  const timeoutMs = Math.round(seconds * 1000);

  const c = await import('../a2a/client/index.ts');
  const net = c.guardedNet({ mode: 'allow-all' }, { allowRanges: args.flags.has('allow-private') ? ['loopback', 'private', 'cgnat'] : [] });
  const ctl = new AbortController();
  env.onSignal('SIGINT', () => ctl.abort());
  env.onSignal('SIGTERM', () => ctl.abort());
  const cardUrl = c.cardUrlOf(url);
  try {
    if (sub === 'card') {
      const card = await c.fetchCard(net, cardUrl, { timeoutMs, signal: ctl.signal });
      env.stdout.write(`${JSON.stringify(card.raw, null, 2)}\n`);
      const client = new c.A2aClient(card, cardUrl, { net });
      env.stderr.write(`claw a2a: ${card.name}: JSON-RPC A2A ${client.endpoint.version} at ${client.endpoint.url}${card.streaming ? ' (streaming)' : ''}\n`);
      return 0;
    }
    const tokenFile = args.values.get('token-file')?.[0];
    const token = tokenFile === undefined ? undefined : (await env.readText(tokenFile)).trim();
    if (token === '') throw new ClawError('usage', `--token-file ${tokenFile} is empty`);
    const client = await c.A2aClient.open(cardUrl, { net, token }, { timeoutMs: Math.min(timeoutMs, 15_000), signal: ctl.signal });
    const r = await client.send(text!, { timeoutMs, signal: ctl.signal, contextId: args.values.get('context')?.[0], ...(args.flags.has('no-stream') ? { stream: false } : {}) });
    if (args.flags.has('json')) env.stdout.write(`${JSON.stringify(r)}\n`);
    else env.stdout.write(`${r.text}\n`);
    if (r.state !== 'completed') env.stderr.write(`claw a2a: task ${r.taskId ?? ''} ended ${r.state}\n`);
    return r.state === 'completed' ? 0 : 1;
  } catch (e) {
    if (e instanceof c.A2aClientError && e.reason === 'timeout') {
      env.stderr.write(`claw a2a: ${e.message}\n`);
      return 3;
    }
    throw e;
  }
}
