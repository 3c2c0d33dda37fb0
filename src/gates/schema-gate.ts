// Gate 1 (docs/tools.md): arguments against the tool's input_schema (spec §5.4) → -32602 with paths.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { ArgumentCheck } from '../tools/json-schema.ts';

export function schemaGate(tool: string, check: ArgumentCheck, args: unknown): void {
  const issues = check(args);
  if (issues.length === 0) return;
  throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: arguments do not match ${tool}'s input_schema`, {
    tool,
    issues: issues.map((i) => ({ path: i.path === '' ? '/' : i.path, keyword: i.keyword, message: i.message })),
  });
}
