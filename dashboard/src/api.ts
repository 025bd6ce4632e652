/**
 * Fetching the REST API's answers. Their types are the server's (src/web/rest/responses.ts,
 * imported as types only, so nothing of the engine is bundled): a field renamed there breaks the
 * dashboard's type check.
 */
export type * from '../../src/web/rest/responses.ts';

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json()) as T & { errors?: string[] };
  if (!res.ok) throw new Error(body.errors?.[0] ?? `${path}: HTTP ${res.status}`);
  return body;
}
