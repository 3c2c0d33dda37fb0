// CRC-32 (IEEE 802.3, the zlib/PNG one). zlib.crc32 is native from Node 20.15 / 22.2; older runtimes (Node 18,
// early 20) get the table version, which computes the same value.
import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

function crc32Js(data: Uint8Array, seed = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (seed ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** CRC-32 of `data`, continuing from `seed` (the CRC of the bytes before it) when given. */
export function crc32(data: Uint8Array, seed = 0): number {
  return native ? native(data, seed) >>> 0 : crc32Js(data, seed);
}

export { crc32Js as crc32ForTest };
