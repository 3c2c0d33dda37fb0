// Gate 6a: sandbox checks before anything runs (spec §5.8). The isolation level must be one this
// board provides (an override cannot ask for more than we can do), `shell.mode: deny` blocks the
// shell tool, and a command line must pass `blocked_commands` / `blocked_patterns` (seed TV-L2-09).
// Paths and hosts are checked by the tools themselves, on resolved values, while they run.
import { checkShellCommand } from '../sandbox/shell-rules.ts';
import { sandboxDenied } from './errors.ts';
import type { ToolCall } from './call.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { ToolImpl } from '../tools/types.ts';

export function sandboxGate(call: ToolCall, isolationProblem: (sb: SandboxSpec, impl: ToolImpl) => string | undefined): void {
  const tool = call.tool.name;
  const sb = call.sandbox;
  const problem = isolationProblem(sb, call.tool.impl);
  if (problem) throw sandboxDenied(tool, 'level', problem);
  const shell = sb.capabilities?.shell;
  if (call.tool.impl.isShell && shell?.mode === 'deny') {
    throw sandboxDenied(tool, 'shell.mode', 'the sandbox denies the shell (shell.mode: deny)');
  }
  const cmd = call.tool.impl.commandLine?.(call.args, sb);
  if (cmd === undefined) return;
  // `shell.mode: deny` is about the shell tool (above); an exec tool's command line still meets the
  // blocked lists, read as in restricted mode.
  const hit = checkShellCommand(cmd, !call.tool.impl.isShell && shell?.mode === 'deny' ? { ...shell, mode: 'restricted' } : shell);
  if (hit) {
    const what = hit.rule === 'mode' ? 'the sandbox denies the shell' : `command matches ${hit.rule} entry "${hit.pattern}"`;
    throw sandboxDenied(tool, `shell.${hit.rule}`, what, { pattern: hit.pattern });
  }
}
