/** Tiny DOM and SVG helpers. */
const SVG = 'http://www.w3.org/2000/svg';

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Array<Node | string>): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

export function table(headers: string[], rows: Array<Array<Node | string>>, attrs: Record<string, string> = {}): HTMLTableElement {
  return el(
    'table',
    attrs,
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))),
  );
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function millis(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`;
}

export function rate(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k/s` : `${Math.round(n)}/s`;
}

export function time(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
