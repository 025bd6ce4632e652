/**
 * Mutual TLS under the handshake, with certificates made here by the openssl command: a cluster CA
 * and two member certificates (named for no host: trust is the CA's), and a second CA with a
 * member of its own. Members of the cluster CA are welcomed; a client without a certificate, a
 * client or a server of the other CA are refused. Then loadTlsSettings' errors.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FramedSocket } from '../../../src/cluster/transport/framing.ts';
import { dialPeer, listenPeers, type PeerListener } from '../../../src/cluster/transport/handshake.ts';
import type { ToJobMaster, ToTaskManager } from '../../../src/cluster/transport/protocol.ts';
import { socketLink } from '../../../src/cluster/transport/socket-link.ts';
import { loadTlsSettings, type TlsSettings } from '../../../src/cluster/transport/tls-settings.ts';
import { type ClusterError, ConfigError } from '../../../src/core/errors.ts';
import { within } from './loopback.ts';

const TOKEN = 'a-cluster-token-of-enough-length';
const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();

let dir = '';
const files = (name: string): { certFile: string; keyFile: string; caFile: string } => ({
  certFile: path.join(dir, `${name}.crt`),
  keyFile: path.join(dir, `${name}.key`),
  caFile: path.join(dir, name.startsWith('rogue') ? 'rogue-ca.crt' : 'ca.crt'),
});
const settings = (name: string): TlsSettings => loadTlsSettings(files(name))!;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A self-signed CA `name` and, signed by it, a member certificate for each of `members`. */
function makeCa(name: string, members: readonly string[]): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  writeFileSync(path.join(dir, 'member.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n');
  for (const m of members) {
    openssl('req', ...ec, '-keyout', `${m}.key`, '-out', `${m}.csr`, '-subj', `/CN=${m}`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${m}.csr`,
      '-CA',
      `${name}.crt`,
      '-CAkey',
      `${name}.key`,
      '-CAcreateserial',
      '-out',
      `${m}.crt`,
      '-days',
      '2',
      '-extfile',
      'member.ext',
    );
  }
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function listen(
  tlsSettings: TlsSettings,
): Promise<{ listener: PeerListener; refused: string[]; nextPeer: Promise<FramedSocket>; nextRefusal: Promise<string> }> {
  const refused: string[] = [];
  let peer: (f: FramedSocket) => void = () => {};
  let refusal: (r: string) => void = () => {};
  const nextPeer = within(30_000, 'a peer', (done: (f: FramedSocket) => void) => (peer = done));
  const nextRefusal = within(30_000, 'a refusal', (done: (r: string) => void) => (refusal = done));
  nextPeer.catch(() => {});
  nextRefusal.catch(() => {});
  const listener = await listenPeers({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    tls: tlsSettings,
    insecure: false,
    handshakeTimeoutMs: 30_000,
    weirVersion: 'test',
    admit: () => ({ welcome: { ok: true } }),
    onPeer: (framed) => {
      cleanup.push(() => framed.close());
      peer(framed);
    },
    onRefused: (_remote, reason) => {
      refused.push(reason);
      refusal(reason);
    },
  });
  cleanup.push(() => listener.close());
  return { listener, refused, nextPeer, nextRefusal };
}

function dial(port: number, tlsSettings: TlsSettings): ReturnType<typeof dialPeer> {
  return dialPeer({ host: '127.0.0.1', port, token: TOKEN, tls: tlsSettings, role: 'control', body: {}, weirVersion: 'test', timeoutMs: 30_000 }).then((d) => {
    cleanup.push(() => d.framed.close());
    return d;
  });
}

describe.skipIf(!hasOpenssl)('mutual TLS (openssl on this host)', () => {
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'weir-tls-'));
    makeCa('ca', ['node1', 'node2']);
    makeCa('rogue-ca', ['rogue']);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('welcomes a member of the cluster CA over TLS, whatever host its certificate names, and carries messages', async () => {
    const server = await listen(settings('node1'));
    const { framed, welcome } = await dial(server.listener.port, settings('node2'));
    expect(welcome).toEqual({ ok: true });
    const tm = socketLink<ToJobMaster, ToTaskManager>(framed);
    const jm = socketLink<ToTaskManager, ToJobMaster>(await server.nextPeer);
    const atJm = within(30_000, 'hello at the job master', (done: (m: ToJobMaster) => void) => jm.onMessage(done));
    tm.send({ type: 'hello' });
    expect(await atJm).toEqual({ type: 'hello' });
    expect(server.refused).toEqual([]);
  });

  it('refuses a client that presents no certificate', async () => {
    const server = await listen(settings('node1'));
    const socket = tls.connect({ host: '127.0.0.1', port: server.listener.port, ca: settings('node2').ca, checkServerIdentity: () => undefined });
    cleanup.push(() => socket.destroy());
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.byteLength));
    socket.on('error', () => {});
    await within(30_000, 'the close', (done: (v: null) => void) => socket.once('close', () => done(null)));
    expect(received).toBe(0); // not even the challenge
    expect(await server.nextRefusal).toBe('TLS handshake failed: peer did not return a certificate');
  });

  it('refuses a client whose certificate another CA signed (though it trusts the cluster CA), on both sides', async () => {
    const server = await listen(settings('node1'));
    const rogue = { ...settings('rogue'), ca: settings('node2').ca };
    const err = (await dial(server.listener.port, rogue).catch((e: unknown) => e)) as ClusterError;
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.message).toContain(
      `127.0.0.1:${server.listener.port}: closed the connection after the TLS handshake, before its challenge: it does not accept this process's certificate`,
    );
    expect(await server.nextRefusal).toMatch(/^TLS handshake failed: the client's certificate is not accepted \(UNABLE_TO_\w+\)$/);
  });

  it('refuses a server whose certificate another CA signed', async () => {
    const server = await listen(settings('rogue'));
    const err = (await dial(server.listener.port, settings('node2')).catch((e: unknown) => e)) as ClusterError;
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.message).toContain('TLS handshake failed: self-signed certificate in certificate chain');
  });

  it('loadTlsSettings reads the three files, and refuses a certificate with a key not its own', () => {
    const s = loadTlsSettings(files('node1'))!;
    expect(s.cert.toString()).toContain('BEGIN CERTIFICATE');
    expect(s.key.toString()).toContain('PRIVATE KEY');
    expect(() => loadTlsSettings({ ...files('node1'), keyFile: files('node2').keyFile })).toThrow(ConfigError);
  });
});

describe('loadTlsSettings', () => {
  it('gives null when no file is given', () => {
    expect(loadTlsSettings({ certFile: null, keyFile: null, caFile: null })).toBeNull();
  });

  it('names the missing flag when only some files are given', () => {
    const err = (() => {
      try {
        loadTlsSettings({ certFile: '/x.crt', keyFile: null, caFile: '/ca.crt' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.option).toBe('--tls-key');
    expect(err!.message).toBe('--tls-key: missing: TLS needs a certificate, its key and the cluster CA together (given: --tls-cert, --tls-ca)');
  });

  it('names the flag and the file it cannot read', () => {
    const missing = path.join(os.tmpdir(), 'weir-no-such-dir', 'cert.pem');
    expect(() => loadTlsSettings({ certFile: missing, keyFile: missing, caFile: missing })).toThrow(`--tls-cert: cannot read ${missing}: ENOENT`);
  });
});
