// The wire form of an audit failure. The log is a Policy guarantee (spec §5.9 `audit`; FemtoClaw
// §2.5, §17 "Record protocol messages in audit log"): what cannot be recorded is not done, so a
// record that could not be written blocks the call as a Policy rule would — spec §9.4 `-32011`
// "Policy denied: tool execution blocked by Policy rule". The data says which guarantee
// (`rule_id: audit:<reason>`), the file and the file system's error code (ENOSPC…), and whether the
// tool had run (`executed`): false means nothing happened and a retry, with the same request_id
// too, runs once the disk takes writes again (protocol/errors.ts isNotExecuted). docs/audit.md "Failure".
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { AuditError } from './log.ts';

export interface RefusalContext {
  tool?: string;
  request_id?: string;
  /** The tool ran (its `execution.finished` could not be written): its result is withheld. */
  executed?: boolean;
  /** STARTING failed (claw.initialize): the agent is in ERROR, as for other start-up refusals. */
  state?: 'ERROR';
}

/** `e` as the error the caller sees: an AuditError becomes -32011; anything else is returned as it is. */
export function auditRefusal(e: unknown, ctx: RefusalContext = {}): unknown {
  if (!(e instanceof AuditError)) return e;
  const what = ctx.executed ? '; the tool ran, its result is withheld' : ctx.executed === false ? '; not run' : '';
  return new ProtocolError(ErrorCode.PolicyDenied, `Policy denied: ${e.message}${what}`, {
    rule_id: `audit:${e.code}`,
    action: 'deny',
    ...ctx,
    ...(e.path !== undefined ? { path: e.path } : {}),
    ...(e.errno !== undefined ? { errno: e.errno } : {}),
  });
}
