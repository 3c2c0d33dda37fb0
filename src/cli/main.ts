// The `claw` command line: dispatches to a command, turns usage errors into exit code 2.
import { ClawError } from '../protocol/errors.ts';
import { MAIN_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

import { validateCommand } from './validate.ts';
import { runCommand } from './run.ts';
import { chatCommand } from './chat.ts';
import { builtinWorkerCommand } from './builtin-worker.ts';
import { doctorCommand } from './doctor.ts';
import { protocolCommand } from './protocol.ts';
import { auditCommand } from './audit.ts';
import { sendCommand } from './send.ts';
import { pairCommand } from './pair.ts';

// Imported eagerly on purpose: loading commands with import() measured worse (BENCH.md "Tried and
// rejected": esbuild wraps each lazily imported module in an init function, +7 KB, +0.7 MB RSS).
const COMMANDS: Record<string, (env: CliEnv, argv: string[]) => Promise<number>> = {
  run: runCommand,
  chat: chatCommand,
  validate: validateCommand,
  doctor: doctorCommand,
  protocol: protocolCommand,
  audit: auditCommand,
  send: sendCommand,
  pair: pairCommand,
  __builtin: builtinWorkerCommand,
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
  const run = COMMANDS[cmd];
  if (!run) {
    env.stderr.write(`claw: unknown command "${cmd}"\n\n${MAIN_HELP}`);
    return 2;
  }
  try {
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
