// `claw doctor`: which isolation layers this machine offers and what each enables (spec §5.8), so
// an operator knows before a tool call is refused what a sandbox needs and what a downgrade costs.
import { probeHost } from '../sandbox/host.ts';
import { scrubInitialEnvironment } from '../node/scrub-env.ts';
import { doctorJson, doctorReport } from '../sandbox/doctor.ts';
import { parseArgs } from './args.ts';
import type { CliEnv } from './env.ts';

export const DOCTOR_HELP = `Usage: claw doctor [--json]
       claw doctor <manifest> [--probe] [--json] [--config FILE]

Probes this machine (bubblewrap, prlimit, cgroups, namespaces) by using each layer once and prints
which sandbox levels and features it can enforce, and the allow_downgrade key for those it cannot.

With a manifest, also checks each Provider in fallback order: the endpoint answers, the key is
accepted, the model is listed (GET /v1/models, or Ollama's /api/tags); with --probe, one tiny chat
request each for native tool calling and structured output. Exit 1 when the primary is not usable.
`;

export async function doctorCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['json', 'probe'], values: ['config', 'log-level'] });
  if (args.flags.has('help')) {
    env.stdout.write(DOCTOR_HELP);
    return 0;
  }
  scrubInitialEnvironment(); // as a session with tools does, so the report shows what its tools would see
  const host = await probeHost({ path: env.env.PATH });
  // Provider checks (src/provider/doctor.ts) when a manifest is named.
  const providers = args.positionals.length > 0 ? await (await import('./doctor-providers.ts')).providerReports(env, args) : undefined;
  if (typeof providers === 'number') return providers;
  if (args.flags.has('json')) env.stdout.write(`${JSON.stringify(providers ? { ...doctorJson(host), providers } : doctorJson(host), null, 2)}\n`);
  else env.stdout.write(doctorReport(host) + (providers ? `\n${(await import('./doctor-providers.ts')).providerDoctorReport(providers)}` : ''));
  return providers && (await import('./doctor-providers.ts')).primaryUnusable(providers) ? 1 : 0;
}
