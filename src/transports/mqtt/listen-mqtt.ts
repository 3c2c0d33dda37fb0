// `--listen mqtt://host[:port]/{swarm}/{agent}` / claw.runtime.yaml `transports: [{ listen: mqtt://..., mqtt: {...} }]`.
// Without an agent level in the URL, the launch manifest's agent name is used. Requests are journaled in data_dir.
import type { ListenContext, TransportEntry } from '../listen.ts';
import { parseMqttUrl } from './endpoint.ts';
import { resolveMqttSettings, type MqttOptionsInput } from './options.ts';
import { connectionSecrets } from './secrets.ts';
import { agentClientId, createMqttTransport, type MqttTransport } from './transport.ts';
import { createFileJournal } from './journal.ts';
import { DEFAULT_REPLY_WINDOW_MS } from './dedup.ts';
import { WallAges } from '../../kernel/wall-age.ts';

export async function createMqttListener(entry: TransportEntry & { mqtt?: MqttOptionsInput }, ctx: ListenContext): Promise<MqttTransport> {
  const endpoint = parseMqttUrl(entry.listen);
  if (!endpoint.agent && ctx.agentName) endpoint.agent = ctx.agentName;
  const settings = resolveMqttSettings(endpoint, entry.mqtt);
  if (endpoint.tls && !settings.tlsVerify) ctx.log.warn('mqtt TLS certificate verification is off (tls_verify: false)', { host: endpoint.host });
  const { password, ca } = await connectionSecrets(settings, { secrets: ctx.secrets, baseDir: ctx.baseDir });
  const now = () => ctx.clock.now();
  const monotonic = () => ctx.clock.monotonic();
  // The journal lives in data_dir: acknowledged requests and stored replies survive a restart (journal.ts); its
  // wall stamps are aged across clock steps (kernel/wall-age.ts).
  const ages = new WallAges(ctx.clock);
  const journal = createFileJournal(ctx.dataDir, agentClientId(settings), { fsync: settings.fsync, windowMs: DEFAULT_REPLY_WINDOW_MS, now, ages: () => ages.ages() });
  return createMqttTransport({ settings, log: ctx.log, password, ca, maxFrameBytes: ctx.maxFrameBytes, now, monotonic, journal });
}
