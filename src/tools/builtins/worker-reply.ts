// The worker's reply on stdout (`claw __builtin`, impl.ts), sized so the runner's output cap never cuts it.
// JSON escapes a control character in 6 bytes and invalid UTF-8 read as text grows 3× (U+FFFD), so a
// plain JSON reply of a result within max_output_bytes could still be cut by the runner at that same cap
// and arrive as "worker failed: no output" (a 2 MiB file of NUL bytes). So the worker cuts its text to
// max_output_bytes (spec §5.8: the result carries no more anyway) and sends each text block as base64:
// the reply is then at most 4/3 of the cap plus a small envelope, the bound the parent reads it with.
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import { DEFAULT_MAX_OUTPUT_BYTES, limit } from '../../sandbox/spec-view.ts';
import type { ContentBlock, ToolResult } from '../types.ts';
import type { WorkerReply } from './impl.ts';

const ENVELOPE = 64 * 1024;

export const outputCap = (sb: SandboxSpec | undefined): number => (sb && limit(sb, 'max_output_bytes')) || DEFAULT_MAX_OUTPUT_BYTES;

/** The stdout cap the parent runs the worker with, for a sandbox whose result cap is `cap`. */
export const workerStdoutCap = (cap: number): number => Math.ceil(cap / 3) * 4 + ENVELOPE;

type Wire = { type: 'text'; b64: string } | Exclude<ContentBlock, { type: 'text' }>;

export function encodeWorkerReply(reply: WorkerReply, sandbox: SandboxSpec | undefined): string {
  if (!('result' in reply)) return JSON.stringify(reply);
  let budget = outputCap(sandbox);
  let cut = false;
  const content: Wire[] = [];
  for (const b of reply.result.content) {
    if (b.type !== 'text') {
      content.push(b);
      continue;
    }
    let bytes = Buffer.from(b.text, 'utf8');
    if (bytes.length > budget) {
      cut = true;
      // At a UTF-8 boundary: back off continuation bytes (10xxxxxx) to the start of the cut character.
      let end = budget;
      while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
      bytes = bytes.subarray(0, end);
    }
    budget -= bytes.length;
    content.push({ type: 'text', b64: bytes.toString('base64') });
  }
  if (cut) content.push({ type: 'text', b64: Buffer.from("[output truncated by the sandbox's max_output_bytes]").toString('base64') });
  return JSON.stringify({ result: { ...reply.result, content } });
}

export function decodeWorkerReply(stdout: string): WorkerReply {
  const reply = JSON.parse(stdout) as WorkerReply | { result: { content: Wire[]; isError?: boolean } };
  if (!('result' in reply)) return reply;
  const content = reply.result.content.map((b): ContentBlock => ('b64' in b ? { type: 'text', text: Buffer.from(b.b64, 'base64').toString('utf8') } : b));
  const result: ToolResult = { ...reply.result, content };
  return { result };
}
