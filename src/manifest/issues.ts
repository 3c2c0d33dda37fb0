// Manifest problems as data (valibot style): the loader collects every one of them in a run,
// and only the CLI (exit code) or the router (-32602 / -32060) turns them into an outcome.

export interface SourcePosition {
  line: number; // 1-based
  col: number; // 1-based
}

export interface ManifestIssue {
  /** File the issue is in (as given or resolved); `<initialize>` for a manifest sent over the wire. */
  file: string;
  /** Position in that file, when known. */
  pos?: SourcePosition;
  /** JSON path inside that file's document, dotted with [n] for array items, e.g. `spec.providers[0].auth`. */
  path: string;
  /** Human message naming the rule. */
  message: string;
  /** Spec section the rule comes from, e.g. `§5.2`. */
  section?: string;
  /** Stable rule identifier, for tests and --json consumers (e.g. `schema`, `ref-unresolved`). */
  rule: string;
}

export type PathSegment = string | number;

export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out === '' ? '(root)' : out;
}

/** `file:line:col  json.path  message (spec §x)` — one line per issue, as `claw validate` prints them. */
export function formatIssue(i: ManifestIssue): string {
  const where = i.pos ? `${i.file}:${i.pos.line}:${i.pos.col}` : i.file;
  const section = i.section ? ` (spec ${i.section})` : '';
  return `${where}  ${i.path}  ${i.message}${section}`;
}

/** An issue before positions are attached: the loader maps `segments` in `file` to line:col. */
export interface RawIssue {
  file: string;
  segments: PathSegment[];
  message: string;
  section?: string;
  rule: string;
}
