// sendMessage takes 1-4096 characters (Bot API); a longer reply goes out as several messages, cut at a
// paragraph, line or word boundary when one lies in the second half of the piece, never inside a
// surrogate pair. Lengths are counted in UTF-16 units, which is never fewer than Telegram's count.
export const TELEGRAM_MAX_TEXT = 4096;

export function splitMessage(text: string, max = TELEGRAM_MAX_TEXT): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const piece = rest.slice(0, max);
    let cut = -1;
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = piece.lastIndexOf(sep);
      if (at >= max / 2) {
        cut = at + sep.length;
        break;
      }
    }
    if (cut < 0) {
      cut = max;
      const c = rest.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) cut -= 1; // keep a surrogate pair together
    }
    const chunk = rest.slice(0, cut).trimEnd();
    if (chunk) out.push(chunk);
    rest = rest.slice(cut).replace(/^\n+/, '');
  }
  if (rest.trim() || out.length === 0) out.push(rest || ' ');
  return out;
}
