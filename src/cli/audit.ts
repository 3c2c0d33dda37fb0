// `claw audit verify <file>`: recompute the hash chain (src/audit/verify.ts) and report the first
// broken record. Exit 0 intact, 1 broken (or unreadable), 2 usage. docs/audit.md "Verifying".
import { verifyAuditText, type OutageSummary } from '../audit/verify.ts';
import { verifyAuditSegments } from '../audit/segments.ts';
import { readAuditDirectory } from '../audit/node-segments.ts';
import { statSync } from 'node:fs';
import { ClawError } from '../protocol/errors.ts';
import { joinPath } from '../manifest/reader.ts';
import { parseArgs } from './args.ts';
import { AUDIT_HELP } from './help.ts';
import type { CliEnv } from './env.ts';

export async function auditCommand(env: CliEnv, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    env.stdout.write(AUDIT_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'verify') throw new ClawError('usage', `unknown subcommand "${sub}" (expected: verify)`);
  const args = parseArgs(rest, { flags: ['json'], values: ['expect-head'] });
  if (args.flags.has('help')) {
    env.stdout.write(AUDIT_HELP);
    return 0;
  }
  if (args.positionals.length !== 1) throw new ClawError('usage', 'expected exactly one audit log file');
  const expectHead = args.values.get('expect-head')?.[0];
  if (expectHead !== undefined && !/^[0-9a-f]{64}$/.test(expectHead)) throw new ClawError('usage', '--expect-head must be a SHA-256 in lower-case hex');
  const file = joinPath(env.cwd, args.positionals[0]);
  if (isDirectory(file)) return verifyDirectory(env, file, args.flags.has('json'), expectHead);
  let bytes: Uint8Array;
  try {
    // An audit log is not a manifest: its size is the operator's (no rotation by default); regular files only still.
    bytes = await env.reader.read(file, { maxBytes: 2 ** 31 - 1 });
  } catch (e) {
    env.stderr.write(`${file}: cannot be read (${(e as { code?: string }).code ?? String(e)})\n`);
    return 1;
  }
  const r = verifyAuditText(bytes);
  // Cutting records off the end leaves a valid chain; only a head kept elsewhere shows it.
  const headMismatch = r.ok && expectHead !== undefined && expectHead !== r.head;
  const ok = r.ok && !headMismatch;
  if (args.flags.has('json')) {
    env.stdout.write(`${JSON.stringify({ ok, file, verified: r.verified, head: r.head, ...(r.outages ? { outages: r.outages } : {}), ...(r.broken ? { broken: r.broken } : {}), ...(headMismatch ? { expected_head: expectHead } : {}) }, null, 2)}\n`);
  } else if (r.broken) {
    const b = r.broken;
    env.stderr.write(`${file}:${b.line}: record${b.seq !== undefined ? ` seq ${b.seq}` : ''} broken: ${b.reason}: ${b.detail}\n`);
    env.stderr.write(`${r.verified} record${r.verified === 1 ? '' : 's'} verified before it\n`);
  } else if (headMismatch) {
    env.stderr.write(`${file}: chain intact (${r.verified} records) but its head ${r.head} is not the expected ${expectHead}: records were cut off the end or it is another log\n`);
  } else {
    env.stdout.write(`${file}: ok, ${r.verified} record${r.verified === 1 ? '' : 's'}, head ${r.head}\n`);
    env.stdout.write(outageText(r.outages));
  }
  return ok ? 0 : 1;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** An audit directory with segment files (retention, docs/audit.md "Segments and retention"). */
function verifyDirectory(env: CliEnv, dir: string, json: boolean, expectHead: string | undefined): number {
  let files: ReturnType<typeof readAuditDirectory>;
  try {
    files = readAuditDirectory(dir);
  } catch (e) {
    env.stderr.write(`${dir}: cannot be read (${(e as { code?: string }).code ?? String(e)})\n`);
    return 1;
  }
  if (files.length === 0) {
    env.stderr.write(`${dir}: no audit segment files (audit.jsonl, audit-<seq>-<ms>.jsonl)\n`);
    return 1;
  }
  const r = verifyAuditSegments(files);
  const headMismatch = r.ok && expectHead !== undefined && expectHead !== r.head;
  const ok = r.ok && !headMismatch;
  const s = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (json) {
    env.stdout.write(`${JSON.stringify({ dir, ...r, ok, ...(headMismatch ? { expected_head: expectHead } : {}) }, null, 2)}\n`);
  } else if (r.broken) {
    const b = r.broken;
    env.stderr.write(`${dir}/${b.file}:${b.line}: record${b.seq !== undefined ? ` seq ${b.seq}` : ''} broken: ${b.reason}: ${b.detail}\n`);
    env.stderr.write(`${s(r.verified, 'record')} verified before it\n`);
  } else if (headMismatch) {
    env.stderr.write(`${dir}: chain intact (${s(r.verified, 'record')}) but its head ${r.head} is not the expected ${expectHead}: records were cut off the end or it is another log\n`);
  } else {
    env.stdout.write(`${dir}: ok, ${s(r.verified, 'record')} in ${s(r.segments, 'segment')}, head ${r.head}\n`);
    // Retention deleted older segments: expected, said so the reader knows where the history begins.
    env.stdout.write(outageText(r.outages));
    if (r.retained_from) env.stdout.write(`history begins at seq ${r.retained_from.seq} (${r.retained_from.file}); older segments were deleted by retention, the first kept record follows ${r.retained_from.prev}\n`);
  }
  return ok ? 0 : 1;
}

/** The chain is intact, but the log could not write for a while: say when, and how much it refused. */
function outageText(o: OutageSummary | undefined): string {
  if (!o) return '';
  const lines = [`${o.count} audit outage${o.count === 1 ? '' : 's'} (the log could not write; calls refused meanwhile: ${o.refused}):`];
  for (const x of o.first) lines.push(`  ${x.file ? `${x.file} ` : ''}seq ${x.seq}: ${x.since} to ${x.until}, ${x.refused} refused${x.at_close ? ', recorded at close' : ''}`);
  if (o.count > o.first.length) lines.push(`  … and ${o.count - o.first.length} more (the audit.outage records in the log)`);
  return `${lines.join('\n')}\n`;
}
