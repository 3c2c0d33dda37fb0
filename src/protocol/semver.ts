// Semantic versions as CKP writes them (spec §1.5): MAJOR.MINOR.PATCH, each one or more ASCII digits, then an
// optional pre-release "-" + [0-9A-Za-z.-]+. One character loop for the manifest's `claw`, the schema's
// version fields and initialize's protocolVersion, instead of four regular expressions: V8 compiles a regular
// expression on its first use and again to machine code on its second, and these run on every start.

/** The parts of `s` as written (digit strings keep leading zeros), or undefined when it is not a version. */
export interface VersionParts {
  major: string;
  minor: string;
  patch: string;
  /** The pre-release without its "-", when there is one. */
  pre?: string;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isPreChar = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 45;

export function parseVersion(s: string): VersionParts | undefined {
  if (typeof s !== 'string') return undefined;
  const parts: string[] = [];
  let i = 0;
  for (let n = 0; n < 3; n++) {
    const start = i;
    while (i < s.length && isDigit(s.charCodeAt(i))) i++;
    if (i === start) return undefined;
    parts.push(s.slice(start, i));
    if (n < 2) {
      if (s.charCodeAt(i) !== 46) return undefined; // "."
      i++;
    }
  }
  if (i === s.length) return { major: parts[0], minor: parts[1], patch: parts[2] };
  if (s.charCodeAt(i) !== 45 || i + 1 === s.length) return undefined; // "-" and at least one character
  for (let j = i + 1; j < s.length; j++) if (!isPreChar(s.charCodeAt(j))) return undefined;
  return { major: parts[0], minor: parts[1], patch: parts[2], pre: s.slice(i + 1) };
}

export const isVersion = (s: unknown): s is string => typeof s === 'string' && parseVersion(s) !== undefined;
