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

let measurer: CanvasRenderingContext2D | null | undefined;

/** Width in pixels of `text` drawn in `font` (a CSS font shorthand); an estimate where no canvas is at hand. */
export function textWidth(text: string, font: string): number {
  if (measurer === undefined) measurer = document.createElement('canvas').getContext('2d');
  if (measurer === null) return text.length * 7.5;
  measurer.font = font;
  return measurer.measureText(text).width;
}

/** `text` cut to fit `maxPx` in `font`, ending in an ellipsis when it was cut. */
export function fitText(text: string, maxPx: number, font: string): string {
  if (textWidth(text, font) <= maxPx) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(`${text.slice(0, mid).trimEnd()}…`, font) <= maxPx) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo).trimEnd()}…`;
}

/**
 * An SVG text of `name` within `maxPx`: cut with an ellipsis when too long, then with the full name
 * in its tooltip (`<title>`); always in `data-full-name`. `suffix` is always shown whole.
 */
export function svgName(attrs: Record<string, string | number>, name: string, maxPx: number, font: string, suffix = ''): SVGElement {
  const shown = fitText(name, maxPx - textWidth(suffix, font), font);
  const t = svg('text', { ...attrs, 'data-full-name': name }, `${shown}${suffix}`);
  if (shown !== name) t.append(svg('title', {}, `${name}${suffix}`));
  return t;
}

/** A count with thousands separators: 48,000. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
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
