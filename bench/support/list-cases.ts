import type { Pool } from 'pg';
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
 */
export async function measureListCases(
  api: ApiClient,
  bare: Pool,
  path: string,
  cases: ListCase[],
  samples: number,
): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  for (const item of cases) {
    const http: number[] = [];
    const sql: number[] = [];
    let total = 0;
    for (let sample = 0; sample < samples + 3; sample++) {
      let started = nowMs();
      total = (await api.request<{ total: number }>('GET', `${path}?${item.query}`)).total;
      const httpMs = nowMs() - started;
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
  return rows;
}
