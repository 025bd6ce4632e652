/**
 * Addresses of the TCP transport: how an address is written in messages (`host:port`, IPv6 in
 * brackets) and which hosts are loopback (a listener on any other address needs TLS).
 */
import { isIPv4, isIPv6 } from 'node:net';

/** `host:port`, with an IPv6 host in brackets (`[::1]:6123`). */
export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The host part of `host:port` as formatAddress writes it (an IPv6 host without its brackets). */
export function hostOfAddress(address: string): string {
  const colon = address.lastIndexOf(':');
  const host = colon < 0 ? address : address.slice(0, colon);
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Whether `host` only reaches this machine: 127.0.0.0/8, ::1 (also as an IPv4-mapped
 * ::ffff:127.x.y.z) or `localhost`. Any other name or address (0.0.0.0 and :: included) may be
 * reached from elsewhere.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && isIPv4(mapped[1]!) && mapped[1]!.startsWith('127.');
}
