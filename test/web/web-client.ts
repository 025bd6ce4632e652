/** A small client of the web server for the tests: JSON GETs and POSTs with or without the token. */
export interface Reply {
  readonly status: number;
  readonly body: any;
}

export function webClient(address: string, token: string) {
  const call = async (method: string, path: string, init: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...init.headers };
    const tok = init.token === undefined ? token : init.token;
    if (tok !== null) headers.authorization = `Bearer ${tok}`;
    if (init.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${address}${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const text = await res.text();
    return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  return {
    get: (path: string) => call('GET', path, { token: null }),
    post: (path: string, body: unknown, token?: string | null, headers?: Record<string, string>) => call('POST', path, { body, token, headers }),
    call,
  };
}

/** Polls `read` until `done` holds for its value (no fixed sleeps; the test timeout bounds it). */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The sum of a /metrics series over its samples labelled `vertex="<vertex>"` (every subtask of it). */
export function seriesSum(metrics: string, name: string, vertex: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(`vertex="${vertex}"`))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
