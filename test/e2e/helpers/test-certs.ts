// Certificates for the TLS e2e suites, made with the openssl CLI in `dir`: a CA (`ca.crt`), a server
// certificate for 127.0.0.1 (`server.crt`/`.key`), one client certificate per name (`<name>.crt`/`.key`,
// subject CN=<name>), and optionally `rogue.crt`/`.key`, self-signed, from a CA the agent does not trust.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeCerts(dir: string, clients: readonly string[], o: { rogue?: boolean } = {}): void {
  const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=claw test CA');
  const leaf = (name: string, ext: string) => {
    ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(dir, `${name}.ext`), ext);
    ossl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  };
  leaf('server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  for (const c of clients) leaf(c, 'extendedKeyUsage=clientAuth\n');
  if (o.rogue) ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rogue.key', '-out', 'rogue.crt', '-days', '1', '-subj', '/CN=rogue');
}
