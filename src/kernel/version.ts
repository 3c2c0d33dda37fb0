// Protocol version negotiation (spec §9.3.1, §1.5): the reply version MUST be <= the requested one.
// We speak 0.3.0 and 0.2.0. Any 0.x request at or above 0.2.0 gets the highest we have that is not
// above it; other majors, and 0.0.x/0.1.x (nothing we speak is <= them), get -32001.
import { parseVersion } from '../protocol/semver.ts';

export const SUPPORTED_PROTOCOL_VERSIONS = ['0.3.0', '0.2.0'] as const;

function parse(v: string): [number, number, number, boolean] | undefined {
  const m = parseVersion(v);
  return m ? [Number(m.major), Number(m.minor), Number(m.patch), m.pre !== undefined] : undefined;
}

/** <= in semver order, where a pre-release sorts before its release. */
function lte(a: string, b: string): boolean {
  const x = parse(a)!;
  const y = parse(b)!;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number);
  return x[3] || !y[3]; // equal numbers: a <= b unless a is the release and b a pre-release
}

export function negotiateVersion(requested: string): string | undefined {
  const r = parse(requested);
  if (!r || r[0] !== 0) return undefined;
  return SUPPORTED_PROTOCOL_VERSIONS.find((s) => lte(s, requested));
}
