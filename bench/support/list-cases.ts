import type { Pool, QueryResult } from 'pg';
import { Pool as HttpPool } from 'undici';
import { processCpuMs } from './http-load';
import { fixed, nowMs, percentile } from './report';
import type { ApiClient } from './stack';

/**
 * A statement with its values and, optionally, its round (0 unless given): the statements of a round run side by
 * side, and each round waits for the answers of the one before, as the API waits for rows before the next statement.
 */
export type Statement = [text: string, values: unknown[], round?: number];

/** Runs a request's statements round by round on `pool`; the answers in the statements' order. */
export async function runStatements(pool: Pool, statements: Statement[]): Promise<QueryResult[]> {
  const answers: QueryResult[] = new Array(statements.length);
  const rounds = [...new Set(statements.map(([, , round]) => round ?? 0))].sort((a, b) => a - b);
  for (const round of rounds)
    await Promise.all(
      statements.map(async ([text, values, own], index) => {
        if ((own ?? 0) === round) answers[index] = await pool.query(text, values);
      }),
    );
  return answers;
}

/**
 * Unmeasured rounds before each case's samples: enough for V8 to optimise each server's code for the case's path
 * (a server in service has answered thousands of such requests), so the first case measured is not also measuring
 * the compiler.
 */
export const LIST_WARM_UPS = 30;

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
  'bare HTTP p50',
  'bare HTTP p95',
  'bare HTTP p95 ratio',
  'p95 / bare HTTP p95',
];

/** The columns `measureListCases` adds when given the servers' process ids (user + system time, 10 ms ticks). */
export const LIST_CASE_CPU_HEADERS = ['API CPU ms/req', 'bare HTTP CPU ms/req'];

/** The columns of another build of the API, when `measureListCases` is given one. */
export const OTHER_API_HEADERS = ['other p50', 'other p95', 'other p95 / bare HTTP p95', 'other CPU ms/req'];

/**
 * Each case `samples` times (after LIST_WARM_UPS unmeasured rounds), one request at a time: the request over HTTP, then the same request
 * to the bare HTTP server (support/bare-list-server.ts: `node:http` doing the least the request needs, the token's
 * lookup and rate count and then the case's statements), then the same SQL run bare as the API runs it (the
 * credential's lookup, then the case's statements round by round on a pool of two). They take turns, so a stall
 * of the shared machine falls on each alike.
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
  bareHttpUrl: string,
  /** With the two servers' process ids, each case's rows end with their CPU time a request (LIST_CASE_CPU_HEADERS). */
  pids?: { api: number; bare: number },
  /**
   * Another build of the API on the same database (an earlier commit), taking its turn after the API: its rows end
   * with OTHER_API_HEADERS, and its first answer of each case must be the API's, byte for byte.
   */
  other?: { baseUrl: string; pid: number },
): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  const client = new HttpPool(api.baseUrl, { connections: 1 });
  const bareHttp = new HttpPool(bareHttpUrl, { connections: 1 });
  const otherHttp = other && new HttpPool(other.baseUrl, { connections: 1 });
  const headers = { authorization: `Bearer ${api.token}` };
  /** The request's time, with its body read; the body and its total when it answered 200. */
  const timed = async (pool: HttpPool, target: string): Promise<{ ms: number; text: string; total?: number }> => {
    const started = nowMs();
    const response = await pool.request({ method: 'GET', path: target, headers });
    const text = await response.body.text();
    const ms = nowMs() - started;
    if (response.statusCode !== 200) throw new Error(`${target} answered ${response.statusCode}`);
    return { ms, text, total: (JSON.parse(text) as { total?: number }).total };
  };
  try {
    for (const item of cases) {
      const http: number[] = [];
      const reference: number[] = [];
      const sql: number[] = [];
      let total: number | string = 0;
      const others: number[] = [];
      let cpuBefore = { api: 0, bare: 0, other: 0 };
      for (let sample = 0; sample < samples + LIST_WARM_UPS; sample++) {
        if (sample === LIST_WARM_UPS && pids)
          cpuBefore = {
            api: processCpuMs(pids.api),
            bare: processCpuMs(pids.bare),
            other: other ? processCpuMs(other.pid) : 0,
          };
        const answer = await timed(client, listCasePath(path, item));
        total = answer.total ?? '';
        if (otherHttp) {
          const otherAnswer = await timed(otherHttp, listCasePath(path, item));
          // Pagination links name the origin each server was asked at; everything else must be the same bytes.
          const mine = answer.text.replaceAll(api.baseUrl, 'ORIGIN');
          const theirs = otherAnswer.text.replaceAll(other!.baseUrl, 'ORIGIN');
          if (sample === 0 && theirs !== mine) {
            const at = [...mine].findIndex((character, index) => character !== theirs[index]);
            throw new Error(`${item.name}: the answers differ from character ${at}: ${mine.slice(at, at + 80)}`);
          }
          if (sample >= LIST_WARM_UPS) others.push(otherAnswer.ms);
        }
        const bareAnswer = await timed(bareHttp, listCasePath(path, item));
        if ((bareAnswer.total ?? '') !== total)
          throw new Error(`${item.name}: the bare server counted ${bareAnswer.total}`);
        const started = nowMs();
        await bare.query(...api.credentialLookup());
        await runStatements(bare, item.sql);
        if (sample >= LIST_WARM_UPS) {
          http.push(answer.ms);
          reference.push(bareAnswer.ms);
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
        fixed(percentile(reference, 50)),
        fixed(percentile(reference, 95)),
        fixed(percentile(reference, 95) / percentile(sql, 95), 2),
        fixed(percentile(http, 95) / percentile(reference, 95), 2),
        ...(pids
          ? [
              fixed((processCpuMs(pids.api) - cpuBefore.api) / samples, 2),
              fixed((processCpuMs(pids.bare) - cpuBefore.bare) / samples, 2),
            ]
          : []),
        ...(other
          ? [
              fixed(percentile(others, 50)),
              fixed(percentile(others, 95)),
              fixed(percentile(others, 95) / percentile(reference, 95), 2),
              pids ? fixed((processCpuMs(other.pid) - cpuBefore.other) / samples, 2) : '',
            ]
          : []),
      ]);
    }
  } finally {
    await client.close();
    await bareHttp.close();
    await otherHttp?.close();
  }
  return rows;
}

/** The request path of a case, as the API and the bare HTTP server both serve it. */
export function listCasePath(path: string, item: ListCase): string {
  return `${path}?${item.query}`;
}

/** The cases as the bare HTTP server takes them (LIST_CASES): each request path with its statements. */
export function bareServerCases(path: string, cases: ListCase[]): string {
  return JSON.stringify(Object.fromEntries(cases.map((item) => [listCasePath(path, item), item.sql])));
}
