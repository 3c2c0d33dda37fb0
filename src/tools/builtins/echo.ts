// `echo`: returns its input text. In-process, touches nothing. Input: { text: string }.
import { textResult } from '../types.ts';
import type { BuiltinDef } from './def.ts';

export const echo: BuiltinDef = {
  name: 'echo',
  touchesOs: false,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  // Synchronous: it does no I/O, so the gates answer it without a promise.
  run(args) {
    if (typeof args.text !== 'string') return textResult('echo needs a string "text" argument', true);
    return textResult(args.text);
  },
};
