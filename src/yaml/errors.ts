// The one error type of the YAML reader. `offset` is a UTF-16 index into the text; index.ts turns it
// into a 1-based line and column. `kind` lets the caller pick the issue rule without matching on text.

export type YamlErrorKind = 'syntax' | 'unsupported' | 'too-deep' | 'alias-limit';

export class YamlError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly kind: YamlErrorKind = 'syntax',
  ) {
    super(message);
    this.name = 'YamlError';
  }
}
