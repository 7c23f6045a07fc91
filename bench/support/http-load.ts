import { readFileSync } from 'node:fs';
import type { Client as PgClient } from 'pg';
import { Pool } from 'undici';
import { nowMs, percentile } from './report';

export interface LoadResult {
  requests: number;
  /** Answers other than the expected status, and failed requests. */
  errors: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** CPU time of the server process (user + system, every thread) per answered request. */
  serverCpuMsPerRequest: number;
}

/** User + system CPU time of a process so far, in ms, from /proc (clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat(5); here the text after the command name starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time of a database's backends so far, by pid (their processes' user + system time, from /proc). */
export async function backendCpuMs(pg: PgClient, database: string): Promise<Map<number, number>> {
  const { rows } = await pg.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [database],
  );
  const times = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      times.set(pid, processCpuMs(pid));
    } catch {
      // the backend has just exited
    }
  }
  return times;
}

/** CPU ms the backends spent between two readings (a backend new since the first counts from zero). */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  return [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
}

/** A `kB` field of a process's /proc status (VmRSS, VmHWM), in bytes; undefined once the process has gone. */
export function processMemoryBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface MachineTicks {
  busy: number;
  total: number;
}

/** Busy and total jiffies of the whole machine so far, every core (/proc/stat's first line). */
export function machineTicks(): MachineTicks {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/** The share of the machine's CPU time (every core, other work included) that was busy between two readings. */
export function busyBetween(before: MachineTicks, after: MachineTicks): number {
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}

/**
 * Keeps `connections` requests in flight (one per keep-alive connection, no pipelining) for `seconds`, the way
 * autocannon does, and counts the answers. `serverPid` is the process whose CPU time is measured over the run.
 */
export async function runLoad(options: {
  origin: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  serverPid: number;
  expectedStatus?: number;
  /** GET unless told otherwise; `body` makes each request's body from its sequence number (0, 1, ...). */
  method?: 'GET' | 'PUT' | 'POST';
  body?: (sequence: number) => string;
  /** The path of each request, from its sequence number, when it is not always `path`. */
  pathOf?: (sequence: number) => string;
}): Promise<LoadResult> {
  const pool = new Pool(options.origin, { connections: options.connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let sequence = 0;
  const cpuBefore = processCpuMs(options.serverPid);
  const start = nowMs();
  const end = start + options.seconds * 1000;
  const connection = async () => {
    while (nowMs() < end) {
      const sent = nowMs();
      const number = sequence++;
      try {
        const { statusCode, body } = await pool.request({
          method: options.method ?? 'GET',
          path: options.pathOf?.(number) ?? options.path,
          headers: options.headers,
          body: options.body?.(number),
        });
        await body.dump({ limit: Number.MAX_SAFE_INTEGER });
        if (statusCode === (options.expectedStatus ?? 200)) latencies.push(nowMs() - sent);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, connection));
  const seconds = (nowMs() - start) / 1000;
  const cpuMs = processCpuMs(options.serverPid) - cpuBefore;
  await pool.close();
  return {
    requests: latencies.length,
    errors,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: percentile(latencies, 99),
    serverCpuMsPerRequest: cpuMs / Math.max(1, latencies.length),
  };
}

/**
 * Several measured runs of one server taken as one: their answers, time and CPU summed, the runs' median p50 and
 * their highest p99.
 */
export function combineLoads(runs: LoadResult[]): LoadResult {
  const middle = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const cpuMs = runs.reduce((sum, run) => sum + run.serverCpuMsPerRequest * run.requests, 0);
  return {
    requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    seconds,
    perSecond: requests / seconds,
    p50Ms: middle(runs.map((run) => run.p50Ms)),
    p95Ms: Math.max(...runs.map((run) => run.p95Ms)),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    serverCpuMsPerRequest: cpuMs / Math.max(1, requests),
  };
}

/** The voice runtime's token the call benchmarks start the API with (`RUNTIME_API_TOKEN`). */
export const BENCH_RUNTIME_TOKEN = 'bench-runtime-token-0123456789abcdefghij';

/**
 * Writes new completed calls through `PUT /api/internal/calls/{external_id}` as the voice runtime does, each load
 * with external ids no earlier load of this ingester used; every write must answer 201.
 */
export function callIngester(options: {
  origin: string;
  serverPid: number;
  connections: number;
  transcript?: string;
}): (assistantId: number, seconds: number) => Promise<LoadResult> {
  let written = 0;
  return async (assistantId, seconds) => {
    const run = written;
    const result = await runLoad({
      origin: options.origin,
      path: '',
      pathOf: (sequence) => `/api/internal/calls/bench-${assistantId}-${run + sequence}`,
      method: 'PUT',
      headers: { authorization: `Bearer ${BENCH_RUNTIME_TOKEN}`, 'content-type': 'application/json' },
      body: (sequence) =>
        JSON.stringify({
          assistant_id: assistantId,
          type: 'outbound',
          status: 'completed',
          client_phone_number: `+1415${2000000 + ((run + sequence) % 8000000)}`,
          assistant_phone_number: '+14155550999',
          duration: 30,
          ...(options.transcript ? { transcript: options.transcript } : {}),
        }),
      connections: options.connections,
      seconds,
      serverPid: options.serverPid,
      expectedStatus: 201,
    });
    if (result.errors > 0) throw new Error(`${result.errors} writes failed or were refused`);
    written += result.requests;
    return result;
  };
}
