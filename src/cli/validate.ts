// `claw validate <file>`: exit 0 valid, 1 invalid, 2 usage error; with --strict, 3 when valid but a
// warning names something this runtime would refuse at STARTING (an unserved channel, docs/channels.md).
import { validateFile } from '../manifest/loader.ts';
import { formatIssue } from '../manifest/issues.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { parseArgs } from './args.ts';
import { unboundChannelProblems, unservedChannelProblems } from '../manifest/checks/unserved-channels.ts';
import { VALIDATE_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

export async function validateCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['json', 'strict'], values: ['config'] });
  if (args.flags.has('help')) {
    env.stdout.write(VALIDATE_HELP);
    return 0;
  }
  if (args.positionals.length !== 1) {
    env.stderr.write(`claw validate: expected exactly one file\n\n${VALIDATE_HELP}`);
    return 2;
  }
  const file = joinPath(env.cwd, args.positionals[0]);
  const explicit = args.values.get('config')?.[0];
  const cfg = await loadRuntimeConfig(env.reader, { explicit: explicit && joinPath(env.cwd, explicit), besideDir: dirnameOf(file) });
  const result = cfg.issues.length > 0 ? { issues: cfg.issues, kind: undefined } : await validateFile(file, { reader: env.reader, registries: cfg.config.registries });
  const valid = result.issues.length === 0;
  // Valid against the spec, but not served here: a warning, so a manifest meant for another runtime still validates.
  const manifest = 'manifest' in result ? result.manifest : undefined;
  // Unbound telegram / custom channels: judged against the runtime configuration found (beside, or --config).
  const problems = valid && manifest ? [...unservedChannelProblems(manifest), ...unboundChannelProblems(manifest, cfg.config.channels ?? {}, cfg.config.a2a?.enabled === true)] : [];
  const warnings = problems.map((w) => ({ file, channel: w.channel, path: w.path.join('.'), message: w.message }));
  if (args.flags.has('json')) {
    env.stdout.write(`${JSON.stringify({ valid, file, kind: result.kind, issues: result.issues, warnings }, null, 2)}\n`);
  } else if (valid) {
    for (const w of warnings) env.stderr.write(`${w.file}  channels.${w.channel}.${w.path}  warning: ${w.message} (refused at STARTING)\n`);
    env.stderr.write(`${file}: valid ${result.kind}${warnings.length ? `, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}` : ''}\n`);
  } else {
    for (const i of result.issues) env.stderr.write(`${formatIssue(i)}\n`);
    env.stderr.write(`${result.issues.length} issue${result.issues.length === 1 ? '' : 's'}\n`);
  }
  return !valid ? 1 : warnings.length > 0 && args.flags.has('strict') ? 3 : 0;
}
