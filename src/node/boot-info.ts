// What the boot loader (targets/boot.ts) hands the hot code: the build id and the cache directory it uses. It is
// a parameter of the function the loader compiles (scripts/build/boot.mjs), so it exists only in the shipped
// code-cache build: tests, `--no-code-cache` builds and anything else see undefined and cache nothing.
declare const __claw_boot: BootInfo | undefined;

export interface BootInfo {
  /** Hash of the hot code and the cold payloads (scripts/build/boot.mjs). */
  id: string;
  /** The cache directory (src/node/code-cache.ts cacheDir), when caching is on for this command. */
  cacheDir?: string;
  /**
   * This start took a one-off path (it wrote a manifest record): leave no V8 code cache from it, so the next
   * start, on the usual path, caches the functions that path compiles rather than the YAML and schema code.
   */
  skipCodeCache(): void;
}

export function bootInfo(): BootInfo | undefined {
  return typeof __claw_boot === 'undefined' ? undefined : __claw_boot;
}
