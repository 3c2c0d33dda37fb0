// Shapes shared by tool implementations, the gates and the sandbox. (spec §5.4, §9.3.2)
import type { SandboxSpec } from '../manifest/schema/index.ts';

/** MCP-compatible content block (spec §9.3.2: implementations MUST support `text`). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource'; resource: Record<string, unknown> };

export interface ToolResult {
  content: ContentBlock[];
  isError?: boolean;
}

/** A manifest Tool with its implementation bound (builtin, exec or MCP). */
export interface BoundTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** MCP-style hints from the manifest (untrusted, spec §5.4). */
  annotations: Record<string, unknown>;
  /** metadata.labels.category, matched by `scope: category` policy rules (spec §5.9). */
  category?: string;
  timeoutMs?: number;
  sandboxRef?: string;
  policyRef?: string;
  impl: ToolImpl;
}

export interface ToolRunContext {
  /** Aborted on timeout or shutdown: the implementation must stop and leave nothing running. */
  signal: AbortSignal;
  requestId: string;
  /** The effective sandbox for this call (spec §5.8), already narrowed by any override. */
  sandbox: SandboxSpec;
  /** Milliseconds the call may run; the gate aborts `signal` when they are up. */
  timeoutMs?: number;
}

export interface ToolImpl {
  kind: 'builtin' | 'exec' | 'mcp';
  /** Builtins that touch the OS run in a child process under `level: process` (docs/tools.md). */
  touchesOs: boolean;
  run(args: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolResult>;
  /**
   * The command line this call would run, for shell tools and exec tools: checked against the
   * sandbox's shell rules before execution (spec §5.8 shell.blocked_commands / blocked_patterns).
   */
  commandLine?(args: Record<string, unknown>, sandbox: SandboxSpec): string | undefined;
  /** True for the `shell` builtin: `shell.mode: deny` blocks it entirely. */
  isShell?: boolean;
  close?(): Promise<void>;
}

/**
 * A tool refused by its sandbox while running (a path outside the scope, a host not allowed, a
 * command string where only argv is allowed). The gate answers -32010 with `rule` and `detail`.
 */
export class SandboxViolation extends Error {
  constructor(
    readonly rule: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'SandboxViolation';
  }
}

export const textResult = (text: string, isError = false): ToolResult =>
  isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
