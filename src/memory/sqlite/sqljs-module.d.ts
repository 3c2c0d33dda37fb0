// sql.js ships no types; sqljs.ts declares the slice it uses and casts the module to it.
declare module 'sql.js' {
  const initSqlJs: (config?: { wasmBinary?: Uint8Array; locateFile?: (file: string) => string }) => Promise<unknown>;
  export default initSqlJs;
}
