// `claw doctor`: which isolation layers this machine offers and what each enables (spec §5.8), so
// an operator knows before a tool call is refused what a sandbox needs and what a downgrade costs.
import { probeHost } from '../sandbox/host.ts';
import { scrubInitialEnvironment } from '../node/scrub-env.ts';
import { doctorJson, doctorReport } from '../sandbox/doctor.ts';
import { parseArgs } from './args.ts';
import type { CliEnv } from './env.ts';

export const DOCTOR_HELP = `Usage: claw doctor [--json]

Probes this machine (bubblewrap, prlimit, cgroups, namespaces) by using each layer once and prints
which sandbox levels and features it can enforce, and the allow_downgrade key for those it cannot.
`;

export async function doctorCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['json'] });
  if (args.flags.has('help')) {
    env.stdout.write(DOCTOR_HELP);
    return 0;
  }
  scrubInitialEnvironment(); // as a session with tools does, so the report shows what its tools would see
  const host = await probeHost();
  env.stdout.write(args.flags.has('json') ? `${JSON.stringify(doctorJson(host), null, 2)}\n` : doctorReport(host));
  return 0;
}
