// Secret resolution, runtime profile §7: runtime secret store hook → environment variable named by
// secret_ref → file $CLAW_SECRETS_DIR/<secret_ref>. Unresolvable → an error naming the ref, never a value.
import { ClawError } from '../protocol/errors.ts';
import type { SecretStore } from './ports.ts';
import { MIN_REDACTABLE_LENGTH, type Redactor } from '../log/redactor.ts';

export interface SecretSources {
  store?: SecretStore;
  env?: Record<string, string | undefined>;
  dir?: string;
  /**
   * Text of a secrets file, refusing anything but a regular file of at most `maxBytes` (src/node/fs-reader.ts
   * readBounded): a ref naming a FIFO or a device in the secrets directory must not hang or fill the runtime.
   */
  readFile?: (path: string, opts: { maxBytes: number }) => Promise<string>;
}

/** A secret is a key or a token: far below this. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

const SAFE_REF = /^[A-Za-z0-9_.-]+$/;

export class SecretResolver {
  private readonly warnedShort = new Set<string>();
  constructor(
    private readonly sources: SecretSources,
    private readonly redactor: Redactor,
    /** Told (by name) about a secret too short to be redacted from logs and output. */
    private readonly onShortSecret?: (ref: string) => void,
  ) {}

  async resolve(ref: string): Promise<string> {
    const value = await this.lookup(ref);
    if (value === undefined || value === '') {
      // Profile §7: never proceed silently with a null or empty secret.
      throw new ClawError('secret-unresolved', `secret_ref "${ref}" could not be resolved (secret store, environment, ${this.sources.dir ? `${this.sources.dir}/${ref}` : 'CLAW_SECRETS_DIR unset'})`);
    }
    if (value.length < MIN_REDACTABLE_LENGTH && !this.warnedShort.has(ref)) {
      // Values this short would mask ordinary text everywhere, so the redactor cannot take them.
      this.warnedShort.add(ref);
      this.onShortSecret?.(ref);
    }
    this.redactor.add(value);
    return value;
  }

  /** `text` with every value resolved so far masked: for what the runtime keeps on disk (fs transport archive). */
  redactText(text: string): string {
    return this.redactor.redact(text);
  }

  private async lookup(ref: string): Promise<string | undefined> {
    const fromStore = await this.sources.store?.get(ref);
    if (fromStore !== undefined) return fromStore;
    const fromEnv = this.sources.env?.[ref];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    // The ref becomes a file name: refuse anything that could leave the secrets directory.
    if (this.sources.dir && this.sources.readFile && SAFE_REF.test(ref) && ref !== '.' && ref !== '..') {
      try {
        return (await this.sources.readFile(`${this.sources.dir}/${ref}`, { maxBytes: MAX_SECRET_FILE_BYTES })).replace(/\r?\n$/, '');
      } catch {
        return undefined;
      }
    }
    return undefined;
  }
}
