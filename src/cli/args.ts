// A tiny argv parser: positionals, `--flag`, `--key value`, `--key=value`; repeated keys collect.
import { ClawError } from '../protocol/errors.ts';

export interface ParsedArgs {
  positionals: string[];
  flags: Set<string>;
  values: Map<string, string[]>;
}

export function parseArgs(argv: readonly string[], spec: { flags?: string[]; values?: string[] }): ParsedArgs {
  const flags = new Set<string>();
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  const knownFlags = new Set(['help', ...(spec.flags ?? [])]);
  const knownValues = new Set(spec.values ?? []);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h') {
      flags.add('help');
      continue;
    }
    if (!a.startsWith('--') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const key = a.slice(2, eq === -1 ? undefined : eq);
    if (knownFlags.has(key) && eq === -1) flags.add(key);
    else if (knownValues.has(key)) {
      const val = eq === -1 ? argv[++i] : a.slice(eq + 1);
      if (val === undefined) throw new ClawError('usage', `--${key} needs a value`);
      values.set(key, [...(values.get(key) ?? []), val]);
    } else throw new ClawError('usage', `unknown option --${key}`);
  }
  return { positionals, flags, values };
}
