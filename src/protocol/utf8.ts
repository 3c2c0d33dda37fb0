// UTF-8 length of a JS string without encoding it: the size limits of the FemtoClaw parser and the
// providers' token estimate both count bytes as they would go on the wire. A lone surrogate counts as
// the 3 bytes of U+FFFD, which is what TextEncoder would write for it.
export function utf8Length(s: string, stopAbove = Infinity): number {
  let n = 0;
  for (let i = 0; i < s.length && n <= stopAbove; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
