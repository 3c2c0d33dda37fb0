// Exec tools, bound in claw.runtime.yaml (the Tool schema is closed, so bindings live there):
//   tools:
//     weather: { exec: { bin: /usr/local/bin/weather, argv: ["--city", "{{city}}"], secrets: [WEATHER_KEY] } }
// The arguments also arrive as JSON on stdin. stdout is the result: a JSON object with a `content`
// array of blocks is used as is, anything else is one text block. A non-zero exit is `isError`.
// argv placeholders fill whole values only: no shell ever sees them (spec §5.8 shell rules still
// apply to the rendered command line).
import type { ContentBlock, ToolImpl, ToolResult } from './types.ts';
import type { ProcessRunner } from './runner-port.ts';

export interface ExecBinding {
  bin: string;
  argv?: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** secret_refs handed to the child per the sandbox's secrets.injection. */
  secrets?: string[];
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

export function renderArgv(template: readonly string[], args: Record<string, unknown>): string[] {
  return template.map((t) =>
    t.replace(PLACEHOLDER, (_, key: string) => {
      const v = args[key];
      if (v === undefined || v === null) return '';
      return typeof v === 'string' ? v : JSON.stringify(v);
    }),
  );
}

function isBlock(b: unknown): b is ContentBlock {
  if (typeof b !== 'object' || b === null) return false;
  const t = (b as { type?: unknown }).type;
  if (t === 'text') return typeof (b as { text?: unknown }).text === 'string';
  if (t === 'image') return typeof (b as { data?: unknown }).data === 'string' && typeof (b as { mimeType?: unknown }).mimeType === 'string';
  return t === 'resource' && typeof (b as { resource?: unknown }).resource === 'object';
}

export function parseExecOutput(stdout: string): ContentBlock[] {
  const trimmed = stdout.trim();
  if (trimmed.startsWith('{')) {
    try {
      const v = JSON.parse(trimmed) as { content?: unknown };
      if (Array.isArray(v.content) && v.content.every(isBlock)) return v.content;
    } catch {
      /* plain text */
    }
  }
  return [{ type: 'text', text: stdout }];
}

export function createExecImpl(binding: ExecBinding, deps: { run: ProcessRunner; resolveSecrets(refs: string[]): Promise<Record<string, string>> }): ToolImpl {
  return {
    kind: 'exec',
    touchesOs: true,
    commandLine: (args) => [binding.bin, ...renderArgv(binding.argv ?? [], args)].join(' '),
    async run(args, ctx): Promise<ToolResult> {
      const secrets = binding.secrets?.length ? await deps.resolveSecrets(binding.secrets) : undefined;
      const out = await deps.run({
        bin: binding.bin,
        argv: renderArgv(binding.argv ?? [], args),
        stdin: JSON.stringify(args),
        env: binding.env,
        cwd: binding.cwd,
        sandbox: ctx.sandbox,
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
        secrets,
      });
      const content = parseExecOutput(out.stdout);
      if (out.stdoutTruncated) content.push({ type: 'text', text: "[output truncated by the sandbox's max_output_bytes]" });
      if (out.exitCode === 0) return { content };
      const why = out.signal ? `killed by ${out.signal}` : `exit ${out.exitCode}`;
      content.push({ type: 'text', text: `[${why}]${out.stderr ? `\n${out.stderr.slice(-2000)}` : ''}` });
      return { content, isError: true };
    },
  };
}
