// Credentials and CA for a connection: the password comes only from a secret_ref through the runtime's
// SecretResolver (runtime profile §7; the resolver registers the value with the log redactor), never from the URL.
import { ClawError } from '../../protocol/errors.ts';
import type { SecretResolver } from '../../kernel/secrets.ts';
import type { MqttSettings } from './options.ts';

export async function connectionSecrets(
  s: MqttSettings,
  deps: { secrets?: SecretResolver; baseDir: string; readFile?: (path: string) => Promise<string> },
): Promise<{ password?: string; ca?: string }> {
  let password: string | undefined;
  if (s.passwordRef) {
    if (!deps.secrets) throw new ClawError('secret-unresolved', `password_ref "${s.passwordRef}" needs the runtime's secret resolver`);
    password = await deps.secrets.resolve(s.passwordRef);
  }
  let ca: string | undefined;
  if (s.caFile) {
    const path = s.caFile.startsWith('/') ? s.caFile : `${deps.baseDir.replace(/\/$/, '')}/${s.caFile}`;
    const read = deps.readFile ?? (async (p: string) => (await import('node:fs/promises')).readFile(p, 'utf8'));
    try {
      ca = await read(path);
    } catch (e) {
      throw new ClawError('usage', `cannot read MQTT CA file ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
  return { password, ca };
}
