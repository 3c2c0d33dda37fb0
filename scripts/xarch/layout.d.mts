// Types for layout.mjs (plain JavaScript, so scripts/xarch/fetch.mjs runs on any Node without a build).
export function layout(root: string): {
  base: string;
  errors: string;
  sysroot(arch: string): string;
  npm(spec: string): string;
};
export function skipped(value: string | undefined): (name: string) => boolean;
