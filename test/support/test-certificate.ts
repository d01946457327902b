import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway self-signed certificate (made by openssl) for these DNS names, or why there is none. */
export function testCertificate(names: string[]): { key: string; cert: string } | string {
  const dir = mkdtempSync(join(tmpdir(), 'test-cert-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=test certificate']
        .concat(['-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`])
        .concat(['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } catch (error) {
    return `openssl could not make a test certificate (${(error as Error).message}); install openssl to run these tests`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
