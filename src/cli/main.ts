// The `claw` command line: dispatches to a command, turns usage errors into exit code 2.
import { ClawError } from '../protocol/errors.ts';
import { MAIN_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

type Command = (env: CliEnv, argv: string[]) => Promise<number>;

// Each command is loaded when it is invoked: the bundle evaluates only the modules of the command
// that runs (esbuild turns each import() into a lazily initialised part of the one file), so
// `claw run` does not evaluate validate/doctor/audit/send code at start-up (BENCH.md).
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./run.ts')).runCommand,
  validate: async () => (await import('./validate.ts')).validateCommand,
  doctor: async () => (await import('./doctor.ts')).doctorCommand,
  protocol: async () => (await import('./protocol.ts')).protocolCommand,
  audit: async () => (await import('./audit.ts')).auditCommand,
  send: async () => (await import('./send.ts')).sendCommand,
  __builtin: async () => (await import('./builtin-worker.ts')).builtinWorkerCommand,
};

export async function main(env: CliEnv): Promise<number> {
  const [cmd, ...rest] = env.argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    env.stdout.write(MAIN_HELP);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === '--version' || cmd === '-v') {
    env.stdout.write(`claw-edge ${env.version} (CKP 0.3.0, 0.2.0)\n`);
    return 0;
  }
  const load = COMMANDS[cmd];
  if (!load) {
    env.stderr.write(`claw: unknown command "${cmd}"\n\n${MAIN_HELP}`);
    return 2;
  }
  try {
    const run = await load();
    return await run(env, rest);
  } catch (e) {
    if (e instanceof ClawError && e.code === 'usage') {
      env.stderr.write(`claw ${cmd}: ${e.message}\n`);
      return 2;
    }
    env.stderr.write(`claw ${cmd}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
