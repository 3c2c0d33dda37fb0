// Shared plumbing for the cross-checks: an issue sink that points into a primitive's document,
// and ref checking that turns a failed resolution into one issue.
import type { PathSegment, RawIssue } from '../issues.ts';
import { formatPath } from '../issues.ts';
import type { PrimitiveKind } from '../kinds.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../resolved.ts';
import type { RefFailure } from '../refs.ts';
import { parseRef, resolveRef } from '../refs.ts';
import { isClawUri } from '../uri.ts';

export type Obj = Record<string, any>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Present, and not just whitespace (an empty secret_ref / endpoint names nothing). */
export const isBlank = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** Issue rule id for a ref failure. */
export function refRule(failure: RefFailure): string {
  return `ref-${failure}`;
}

export interface RefCheckOptions {
  /**
   * Do not report a plain (non-URI) ref that names no declared primitive, or that is not a CKP
   * name at all: the caller knows such names may be provided at runtime (e.g. MCP tool names like
   * `read_file`). claw:// URIs are always checked.
   */
  tolerateUnknownPlainName?: boolean;
}

export class Checker {
  readonly issues: RawIssue[] = [];
  /**
   * `standalone`: checking one primitive document on its own (`claw validate tool.yaml`). Its
   * references point at documents we don't have, so they get a syntax check only, and rules about
   * the manifest as a whole are skipped.
   */
  constructor(
    readonly m: ResolvedManifest,
    readonly standalone = false,
  ) {}

  /** Report an issue at `rel` (relative to the primitive's `spec`) inside primitive `p`. */
  report(p: ResolvedPrimitive, rel: PathSegment[], rule: string, section: string, message: string): void {
    this.issues.push({ file: p.origin.file, segments: [...p.origin.specPath, ...rel], rule, section, message });
  }

  /** Report an issue on the root manifest itself (`segments` are absolute there). */
  reportManifest(segments: PathSegment[], rule: string, section: string, message: string): void {
    if (this.standalone) return;
    this.issues.push({ file: this.m.file, segments, rule, section, message });
  }

  /**
   * Check the ref at `rel` inside `owner` against the declared primitives of `kind`. Returns the
   * target, or undefined after reporting. Values that are not strings are the schema's business.
   * Malformed URIs are reported under §7 (the grammar they break); everything else under `section`,
   * the rule that requires the reference to resolve.
   */
  ref(
    owner: ResolvedPrimitive,
    rel: PathSegment[],
    kind: PrimitiveKind,
    value: unknown,
    section: string,
    opts: RefCheckOptions = {},
  ): ResolvedPrimitive | undefined {
    if (typeof value !== 'string') return undefined;
    if (this.standalone) {
      this.refSyntax(owner, rel, kind, value, section);
      return undefined;
    }
    const r = resolveRef(this.m, kind, value);
    if (r.ok) return r.primitive;
    if (opts.tolerateUnknownPlainName && !isClawUri(value) && (r.failure === 'unresolved' || r.failure === 'invalid-name')) return undefined;
    this.report(
      owner,
      rel,
      refRule(r.failure),
      r.failure === 'invalid-uri' ? '§7' : section,
      `${describe(owner)}: ${formatPath(rel)} does not resolve to a ${kind}: ${r.reason}`,
    );
    return undefined;
  }

  /** Syntax-only ref check (for refs that may legitimately point outside the manifest). */
  refSyntax(owner: ResolvedPrimitive, rel: PathSegment[], kind: PrimitiveKind, value: unknown, section: string): void {
    if (typeof value !== 'string') return;
    const r = parseRef(value, kind);
    if (r.ok || r.failure === 'not-local') return;
    this.report(
      owner,
      rel,
      refRule(r.failure),
      r.failure === 'invalid-uri' ? '§7' : section,
      `${describe(owner)}: ${formatPath(rel)} is not a valid ${kind} reference: ${r.reason}`,
    );
  }
}

/** `Tool 'web-fetch'` */
export function describe(p: ResolvedPrimitive): string {
  return `${p.kind} '${p.name}'`;
}

export function specOf(p: ResolvedPrimitive | undefined): Obj | undefined {
  return p && isObj(p.spec) ? p.spec : undefined;
}

/**
 * Cycles in a directed graph given by `edges(node)`, visiting nodes in `order`. Calls `onCycle`
 * once per back edge with the edge and the cycle path (first node repeated at the end).
 */
export function findCycles<E extends { to: string }>(
  order: string[],
  edges: (node: string) => E[],
  onCycle: (from: string, edge: E, path: string[]) => void,
): void {
  const state = new Map<string, 'active' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'active');
    stack.push(node);
    for (const e of edges(node)) {
      const s = state.get(e.to);
      if (s === 'active') onCycle(node, e, [...stack.slice(stack.indexOf(e.to)), e.to]);
      else if (s === undefined) visit(e.to);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const n of order) if (!state.has(n)) visit(n);
}
