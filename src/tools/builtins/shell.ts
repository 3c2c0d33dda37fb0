// `shell`: runs a program with arguments and no shell — { bin: string, argv?: string[] } — as the
// FemtoClaw seed's example does. A `command` string is run by /bin/sh -c only when the sandbox's
// shell.mode is `full` (spec §5.8); in `restricted` mode it is refused after the blocked-command
// check, and so is a `bin` that is a shell, an interpreter or a program that runs another one
// (`{ bin: "/bin/sh", argv: ["-c", …] }` is a command string by another name; shell-interpreter.ts).
// Runs through the sandbox runner: own process group, timeout kill, limits, env allowlist.
import { SandboxViolation, type ToolResult } from '../types.ts';
import type { BuiltinDef } from './def.ts';
import { shellMode } from '../../sandbox/spec-view.ts';
import { interpreterOf, nodeProgramIo, programName as programNameOf, type ProgramIo } from './shell-interpreter.ts';

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

function parse(args: Record<string, unknown>): { bin: string; argv: string[] } | { command: string } | undefined {
  if (typeof args.bin === 'string' && args.bin !== '' && (args.argv === undefined || isStrings(args.argv))) return { bin: args.bin, argv: (args.argv as string[]) ?? [] };
  if (typeof args.command === 'string' && args.command.trim() !== '') return { command: args.command };
  return undefined;
}

/** The shell builtin; `programs` is how a `bin` is looked up (injectable for tests). */
export const createShell = (programs: () => ProgramIo = () => nodeProgramIo()): BuiltinDef => ({
  name: 'shell',
  touchesOs: true,
  isShell: true,
  inputSchema: {
    oneOf: [
      { type: 'object', properties: { bin: { type: 'string', minLength: 1 }, argv: { type: 'array', items: { type: 'string' } } }, required: ['bin'] },
      { type: 'object', properties: { command: { type: 'string', minLength: 1 } }, required: ['command'] },
    ],
  },
  commandLine(args) {
    const p = parse(args);
    if (!p) return undefined;
    return 'command' in p ? p.command : [p.bin, ...p.argv].join(' ');
  },
  async run(args, ctx): Promise<ToolResult> {
    const p = parse(args);
    if (!p) return { content: [{ type: 'text', text: 'shell needs { bin, argv? } or { command }' }], isError: true };
    let bin: string;
    let argv: string[];
    if ('command' in p) {
      const mode = shellMode(ctx.sandbox);
      if (mode !== 'full') throw new SandboxViolation('shell.mode', `a command string needs shell.mode "full" (this sandbox is "${mode}"); pass { bin, argv } instead`);
      bin = '/bin/sh';
      argv = ['-c', p.command];
    } else {
      bin = p.bin;
      argv = p.argv;
      const mode = shellMode(ctx.sandbox);
      const interpreter = mode === 'full' ? undefined : interpreterOf(bin, ctx.cwd, programs());
      if (interpreter) {
        throw new SandboxViolation(
          'shell.mode',
          `"${bin}" is ${interpreter === programNameOf(bin) ? 'a shell, interpreter or command runner' : `${interpreter} (a shell, interpreter or command runner)`}: with shell.mode "${mode}" it would run a command string; that needs shell.mode "full", or bind the program as an exec tool`,
        );
      }
    }
    const out = await ctx.run({ bin, argv, sandbox: ctx.sandbox, timeoutMs: ctx.timeoutMs, signal: ctx.signal, cwd: ctx.cwd });
    const text = out.stdout + (out.stdoutTruncated ? `\n[output truncated by the sandbox's max_output_bytes]` : '');
    const failed = out.exitCode !== 0;
    const tail = failed ? `\n[exit ${out.exitCode ?? out.signal}]${out.stderr ? `\n${out.stderr.slice(-2000)}` : ''}` : '';
    return failed ? { content: [{ type: 'text', text: text + tail }], isError: true } : { content: [{ type: 'text', text }] };
  },
});

export const shell: BuiltinDef = createShell();
