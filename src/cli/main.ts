// The `claw` command line: dispatches to a command, turns usage errors into exit code 2.
import { ClawError } from '../protocol/errors.ts';
import { MAIN_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

import { validateCommand } from './validate.ts';
import { runCommand } from './run.ts';

type Command = (env: CliEnv, argv: string[]) => Promise<number>;

// `run` and `validate` are imported eagerly (the start-up path); every other command with import(), so its
// code is a chunk of its own, read and compiled only when that command runs (docs/startup.md).
const COMMANDS: Record<string, () => Command | Promise<Command>> = {
  run: () => runCommand,
  validate: () => validateCommand,
  chat: async () => (await import('./chat.ts')).chatCommand,
  eval: async () => (await import('./eval.ts')).evalCommand,
  doctor: async () => (await import('./doctor.ts')).doctorCommand,
  protocol: async () => (await import('./protocol.ts')).protocolCommand,
  audit: async () => (await import('./audit.ts')).auditCommand,
  send: async () => (await import('./send.ts')).sendCommand,
  pair: async () => (await import('./pair.ts')).pairCommand,
  a2a: async () => (await import('./a2a.ts')).a2aCommand,
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
  const load = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
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
