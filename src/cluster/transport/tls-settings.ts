/**
 * TLS of the cluster's connections, mutual as Flink's internal SSL: every job master and task
 * manager has a certificate signed by the cluster's own CA, presents it, and accepts a peer only
 * with one from that CA. Trust comes from the shared CA, not from host names (cluster certificates
 * are often not issued per host), so the client does not check the server's name.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, type ConnectionOptions, type TlsOptions } from 'node:tls';
import { ConfigError, errorMessage } from '../../core/errors.ts';

/** PEM contents: this process's certificate and key, and the cluster CA that signed every peer's. */
export interface TlsSettings {
  readonly cert: Buffer | string;
  readonly key: Buffer | string;
  readonly ca: Buffer | string;
}

/** The command-line flags of the three files, named in errors. */
const FLAGS = { certFile: '--tls-cert', keyFile: '--tls-key', caFile: '--tls-ca' } as const;

/**
 * The settings from three PEM files, or null when none is given (no TLS).
 * @throws ConfigError naming the missing flag when only some are given, the flag and file of one
 * that cannot be read, or the files when they do not make a certificate and its key.
 */
export function loadTlsSettings(o: { certFile: string | null; keyFile: string | null; caFile: string | null }): TlsSettings | null {
  const given = (Object.keys(FLAGS) as Array<keyof typeof FLAGS>).filter((k) => o[k] !== null);
  if (given.length === 0) return null;
  const missing = (Object.keys(FLAGS) as Array<keyof typeof FLAGS>).find((k) => o[k] === null);
  if (missing !== undefined)
    throw new ConfigError(
      FLAGS[missing],
      `missing: TLS needs a certificate, its key and the cluster CA together (given: ${given.map((k) => FLAGS[k]).join(', ')})`,
    );
  const settings = { cert: read(o.certFile!, FLAGS.certFile), key: read(o.keyFile!, FLAGS.keyFile), ca: read(o.caFile!, FLAGS.caFile) };
  try {
    createSecureContext(settings);
  } catch (err) {
    throw new ConfigError('tls', `${o.certFile}, ${o.keyFile} and ${o.caFile} do not make a certificate, its key and a CA: ${errorMessage(err)}`);
  }
  return settings;
}

/** What a listener passes to tls.createServer: it asks for the client's certificate and refuses one not signed by the CA. */
export function serverTlsOptions(settings: TlsSettings): TlsOptions {
  return { cert: settings.cert, key: settings.key, ca: settings.ca, requestCert: true, rejectUnauthorized: true };
}

/**
 * What a dialer passes to tls.connect: it presents its certificate and accepts a server whose
 * certificate the CA signed, whatever name it carries (trust is the CA's, see the module comment).
 */
export function clientTlsOptions(settings: TlsSettings): ConnectionOptions {
  return { cert: settings.cert, key: settings.key, ca: settings.ca, rejectUnauthorized: true, checkServerIdentity: () => undefined };
}

function read(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(flag, `cannot read ${file}: ${errorMessage(err)}`);
  }
}
