// sql.js ships no types; sqljs.ts and image-db.ts declare the slice they use and casts the module to it.
declare module 'sql.js' {
  const initSqlJs: (config?: { wasmBinary?: Uint8Array; locateFile?: (file: string) => string }) => Promise<unknown>;
  export default initSqlJs;
}
