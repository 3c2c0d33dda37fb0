// `claw protocol check --manifest m.yaml`: a candidate model output on stdin → the FemtoClaw
// verdict as JSON on stdout, so users can debug prompts (docs/femtoclaw.md). Exit 0 valid, 1 rejected,
// 2 usage (including a manifest that does not load: 1 means "the output was rejected", only).
import { loadManifestFile } from '../manifest/loader.ts';
import { formatIssue } from '../manifest/issues.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { capabilitiesFromManifest } from '../femtoclaw/registry.ts';
import { validateOutput, DEFAULT_VALIDATION_LIMITS } from '../femtoclaw/validate.ts';
import { correctionFor } from '../femtoclaw/correction.ts';
import { ClawError } from '../protocol/errors.ts';
import { parseArgs } from './args.ts';
import { PROTOCOL_HELP } from './help.ts';
import type { CliEnv } from './env.ts';
import type { ByteSource } from '../transports/stdio.ts';

export async function protocolCommand(env: CliEnv, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    env.stdout.write(PROTOCOL_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'check') throw new ClawError('usage', `unknown subcommand "${sub}" (expected: check)`);
  const args = parseArgs(rest, { flags: ['correction'], values: ['manifest', 'config', 'max-bytes', 'max-depth'] });
  if (args.flags.has('help')) {
    env.stdout.write(PROTOCOL_HELP);
    return 0;
  }
  const manifestArg = args.values.get('manifest')?.[0];
  if (!manifestArg || args.positionals.length > 0) throw new ClawError('usage', 'expected --manifest FILE (and the model output on stdin)');
  const limits = {
    maxBytes: positiveInt(args.values.get('max-bytes')?.[0], 'max-bytes') ?? DEFAULT_VALIDATION_LIMITS.maxBytes,
    maxDepth: positiveInt(args.values.get('max-depth')?.[0], 'max-depth') ?? DEFAULT_VALIDATION_LIMITS.maxDepth,
  };

  const file = joinPath(env.cwd, manifestArg);
  const explicit = args.values.get('config')?.[0];
  const cfg = await loadRuntimeConfig(env.reader, { explicit: explicit && joinPath(env.cwd, explicit), besideDir: dirnameOf(file) });
  const loaded = cfg.issues.length > 0 ? { issues: cfg.issues, manifest: undefined } : await loadManifestFile(file, { reader: env.reader, registries: cfg.config.registries });
  if (!loaded.manifest) {
    for (const i of loaded.issues) env.stderr.write(`${formatIssue(i)}\n`);
    env.stderr.write('claw protocol check: the manifest does not load, so there is no capability registry to check against\n');
    return 2;
  }
  const { registry, notes } = capabilitiesFromManifest(loaded.manifest);
  for (const n of notes) env.stderr.write(`note: ${n}\n`);

  const input = await readAll(env.stdin, limits.maxBytes + 1);
  const v = validateOutput(input, registry, limits);
  const out: Record<string, unknown> = v.valid
    ? { valid: true, form: v.form, ...(v.form === 'tool_call' ? { tool: v.tool } : {}) }
    : { ...v };
  if (!v.valid && args.flags.has('correction')) out.correction = correctionFor(v, { tools: [...registry.keys()] });
  env.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  return v.valid ? 0 : 1;
}

function positiveInt(s: string | undefined, name: string): number | undefined {
  if (s === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(s)) throw new ClawError('usage', `--${name} must be a positive integer`);
  return Number(s);
}

/** All of stdin as bytes, keeping at most `cap` (enough to tell "too large" without holding more). */
function readAll(src: ByteSource, cap: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let size = 0;
    const enc = new TextEncoder();
    src.on('data', (c) => {
      if (size >= cap) return;
      const b = typeof c === 'string' ? enc.encode(c) : c;
      const keep = b.subarray(0, cap - size);
      parts.push(keep);
      size += keep.length;
    });
    src.on('error', reject);
    src.on('end', () => {
      const all = new Uint8Array(size);
      let off = 0;
      for (const p of parts) {
        all.set(p, off);
        off += p.length;
      }
      resolve(all);
    });
  });
}
