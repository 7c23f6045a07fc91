import type { Pool } from 'pg';
import { Pool as HttpPool } from 'undici';
import { fixed, nowMs, percentile } from './report';
import type { ApiClient } from './stack';

export type Statement = [string, unknown[]];

export interface ListCase {
  name: string;
  /** The query string of the request. */
  query: string;
  /** The page's statement and its total's, which the API runs side by side. */
  sql: Statement[];
}

export const LIST_CASE_HEADERS = [
  'case',
  'total',
  'HTTP p50 ms',
  'p95',
  'p99',
  'bare SQL p50',
  'bare p95',
  'p95 ratio',
];

/**
 * Each case `samples` times (after 3 warm-ups), one request at a time: the request over HTTP, then the same SQL run
 * bare as the API runs it (the credential's lookup, then the case's statements side by side on a pool of two).
 * Requests go through undici's pool on one keep-alive connection, as an HTTP client library sends them: the
 * global `fetch` adds 0.4-0.6 ms of its own a request at p50 here (1-1.5 ms at p95), which is the client's time,
 * not the API's.
 */
export async function measureListCases(
  api: ApiClient,
  bare: Pool,
  path: string,
  cases: ListCase[],
  samples: number,
): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  const client = new HttpPool(api.baseUrl, { connections: 1 });
  const headers = { authorization: `Bearer ${api.token}` };
  try {
    for (const item of cases) {
      const http: number[] = [];
      const sql: number[] = [];
      let total = 0;
      for (let sample = 0; sample < samples + 3; sample++) {
        let started = nowMs();
        const response = await client.request({ method: 'GET', path: `${path}?${item.query}`, headers });
        const body = (await response.body.json()) as { total: number };
        const httpMs = nowMs() - started;
        if (response.statusCode !== 200) throw new Error(`${path}?${item.query} answered ${response.statusCode}`);
        total = body.total;
        started = nowMs();
        await bare.query(...api.credentialLookup());
        await Promise.all(item.sql.map(([text, values]) => bare.query(text, values)));
        if (sample >= 3) {
          http.push(httpMs);
          sql.push(nowMs() - started);
        }
      }
      rows.push([
        item.name,
        total,
        fixed(percentile(http, 50)),
        fixed(percentile(http, 95)),
        fixed(percentile(http, 99)),
        fixed(percentile(sql, 50)),
        fixed(percentile(sql, 95)),
        fixed(percentile(http, 95) / percentile(sql, 95), 2),
      ]);
    }
  } finally {
    await client.close();
  }
  return rows;
}
