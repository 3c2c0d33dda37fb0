// `claw pair <manifest> <code>`: the operator approves a pairing code (spec §5.3 pairing mode: "Unknown
// users receive an approval code; admin approves"; docs/channels.md "Pairing"). The code was shown to the
// user by the channel; approving it pairs that user on that channel, persisted in data_dir, and the
// running agent lets them through from their next message. `--list` shows pending codes.
import { loadManifestFile } from '../manifest/loader.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { formatIssue } from '../manifest/issues.ts';
import { ClawError } from '../protocol/errors.ts';
import { approvePairing, codeLive } from '../channels/pairing.ts';
import { filePairingStorage, pairingDir } from '../channels/pairing-store.ts';
import type { ChannelSpec } from '../channels/types.ts';
import { composeRuntime } from '../runtime/compose.ts';
import { parseArgs } from './args.ts';
import { PAIR_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

export async function pairCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['list'], values: ['config', 'channel'] });
  if (args.flags.has('help')) {
    env.stdout.write(PAIR_HELP);
    return 0;
  }
  const list = args.flags.has('list');
  const [manifestArg, code, ...more] = args.positionals;
  if (!manifestArg || more.length > 0 || (list ? code !== undefined : code === undefined)) throw new ClawError('usage', 'expected <manifest> <code>, or <manifest> --list');
  const manifestFile = joinPath(env.cwd, manifestArg);
  const explicit = args.values.get('config')?.[0];
  const cfg = await loadRuntimeConfig(env.reader, { explicit: explicit && joinPath(env.cwd, explicit), besideDir: dirnameOf(manifestFile) });
  if (cfg.issues.length > 0) {
    for (const i of cfg.issues) env.stderr.write(`${formatIssue(i)}\n`);
    return 1;
  }
  const loaded = await loadManifestFile(manifestFile, { reader: env.reader, registries: cfg.config.registries });
  if (!loaded.manifest) {
    for (const i of loaded.issues) env.stderr.write(`${formatIssue(i)}\n`);
    return 1;
  }
  // The same data_dir `claw run` uses for this manifest (src/runtime/compose.ts).
  const { dataDir } = composeRuntime({ host: env, config: cfg.config, configFile: cfg.file, manifest: loaded.manifest, manifestFile });
  const only = args.values.get('channel')?.[0];
  const channels = loaded.manifest.channels.filter((c) => (c.spec as ChannelSpec).access_control?.mode === 'pairing' && (only === undefined || c.name === only));
  if (channels.length === 0) {
    env.stderr.write(`claw pair: ${only ? `no channel "${only}" in pairing mode` : 'the manifest has no channel in pairing mode'}\n`);
    return 1;
  }
  const now = env.clock.now();
  if (list) {
    for (const c of channels) {
      for (const p of filePairingStorage(pairingDir(dataDir, c.name)).readPending()) {
        if (codeLive(p, now)) env.stdout.write(`${c.name}\t${p.code}\t${p.user}\texpires ${new Date(p.expires_ms).toISOString()}\n`);
      }
    }
    return 0;
  }
  let expired = false;
  for (const c of channels) {
    const r = approvePairing(filePairingStorage(pairingDir(dataDir, c.name)), code!, now);
    if (r.ok) {
      env.stdout.write(`paired ${r.user} on channel ${c.name}\n`);
      return 0;
    }
    if (r.reason === 'expired') expired = true;
  }
  env.stderr.write(expired ? `claw pair: code ${code} has expired; the user gets a new one with their next message\n` : `claw pair: no pending pairing code ${code}\n`);
  return 1;
}
