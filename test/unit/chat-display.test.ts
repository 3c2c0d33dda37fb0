// How `claw chat` shows a reply (src/cli/chat.ts displayReply, docs/agent.md "claw chat"): model text
// is untrusted, so control characters never reach the terminal, and piped output keeps one line per message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { displayReply } from '../../src/cli/chat.ts';

const cases: [string, string, string, string][] = [
  // [name, input, piped, interactive]
  ['plain text unchanged', 'hello, world', 'hello, world', 'hello, world'],
  ['LF', 'a\nb', 'a\\nb', 'a\nb'],
  ['CRLF is one break', 'a\r\nb', 'a\\nb', 'a\nb'],
  ['lone CR is a break, never a carriage return', 'a\rb', 'a\\nb', 'a\nb'],
  ['U+2028 / U+2029', 'a\u2028b\u2029c', 'a\\nb\\nc', 'a\nb\nc'],
  ['tab kept', 'a\tb', 'a\tb', 'a\tb'],
  ['ESC sequence defused', '\u001b[2J\u001b]0;title\u0007x', '\ufffd[2J\ufffd]0;title\ufffdx', '\ufffd[2J\ufffd]0;title\ufffdx'],
  ['NUL, DEL and C1 (8-bit CSI)', '\u0000\u007f\u009b1m', '\ufffd\ufffd\ufffd1m', '\ufffd\ufffd\ufffd1m'],
  ['backslashes left as they are', 'C:\\dir\\n', 'C:\\dir\\n', 'C:\\dir\\n'],
  ['non-ASCII text kept', 'héllo 日本 🙂', 'héllo 日本 🙂', 'héllo 日本 🙂'],
];

for (const [name, input, piped, interactive] of cases) {
  test(name, () => {
    assert.is(displayReply(input, false), piped);
    assert.is(displayReply(input, true), interactive);
    assert.not.ok(displayReply(input, false).includes('\n'), 'piped output is one line');
  });
}

test.run();
