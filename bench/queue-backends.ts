/**
 * The two queue backends side by side, in one run, and the embedded PostgreSQL of `npm start`'s fallback.
 *
 *   npm run bench:queue-backends
 *
 * 1. Empty jobs: 2,000 jobs added in batches of 100 to a queue of their own, consumed by one BullMQ Worker
 *    (WORKER_CONCURRENCY=4) whose processor returns at once; jobs/s from the first add to the last completion,
 *    and the adds alone. Queues and workers are built by libs/jobs' QueueBackend, as the apps build them.
 * 2. One-page TXT documents: the real API and worker in this process, 30 uploads one after another, each polled
 *    every 10 ms until `active` (bench/support/txt-documents.ts); p50/p95 of create -> active.
 * 3. The embedded PostgreSQL (scripts/local-services.js): the time of a first start (initdb included, in a
 *    scratch directory on port 54330, removed after), of a start of .local/postgres, its processes' memory idle
 *    and after the runs on it. Skipped with BENCH_EMBEDDED=0.
 *
 * Each of 1 and 2 runs on a private Redis the run starts (or BENCH_REDIS_URL), on a Redis Cluster of 3 masters and 3 replicas started from the
 * machine's `redis-server` on free loopback ports (test/support/redis-cluster.ts; skipped with BENCH_CLUSTER=0 or
 * where redis-server is missing), on the machine's PostgreSQL (127.0.0.1:5432) and, unless skipped, on the embedded
 * PostgreSQL (127.0.0.1:54329); each run has its own database (and Redis prefix).
 */
// First, so the worker booted below starts its extraction threads from compiled JavaScript.
import { extractionThreadFrom } from './support/compiled-thread-hook';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueBackend } from '@app/jobs';
import { LocalRedisCluster } from '../test/support/redis-cluster';
import { fixed, MIB, nowMs, onInterrupt, percentile, printTable, runMain } from './support/report';
import { ApiClient, benchConfig, createBenchEnvironment, startBenchStack } from './support/stack';
import { sequential } from './support/txt-documents';
// Plain JavaScript shared with `npm start`.
const { startEmbeddedPostgres } = require('../scripts/local-services') as {
  startEmbeddedPostgres(options?: {
    dataDir?: string;
    port?: number;
  }): Promise<{ pid: number; startMs: number; created: boolean; stop(): Promise<void> }>;
};

const JOBS = 2000;
const BATCH = 100;
const DOCUMENTS = 30;
const WARM_UP_DOCUMENTS = 3;

interface Target {
  label: string;
  backend: 'redis' | 'postgres';
  serverDatabaseUrl?: string;
  /** The configuration that points the apps at it, beyond QUEUE_BACKEND. */
  env?: Record<string, string>;
}

async function emptyJobs(target: Target): Promise<{ jobsPerSecond: number; addsPerSecond: number }> {
  const environment = await createBenchEnvironment({
    serverDatabaseUrl: target.serverDatabaseUrl,
    // A cluster's keys go with the cluster.
    redis: target.backend === 'redis' && !target.env?.REDIS_CLUSTER_NODES,
  });
  const config = benchConfig(environment, { QUEUE_BACKEND: target.backend, ...target.env });
  const backend = new QueueBackend(config);
  const queue = backend.createQueue('bench-empty');
  let completed = 0;
  let allDone: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allDone = resolve));
  const worker = backend.createWorker('bench-empty', async () => undefined, {
    concurrency: config.workerConcurrency,
    autorun: false,
  });
  worker.on('completed', () => {
    if (++completed === JOBS) allDone();
  });
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    void worker.run();
    const start = nowMs();
    for (let offset = 0; offset < JOBS; offset += BATCH) {
      await queue.addBulk(
        Array.from({ length: BATCH }, (_, index) => ({
          name: 'empty',
          data: { index: offset + index },
          opts: { removeOnComplete: true },
        })),
      );
    }
    const addedMs = nowMs() - start;
    await finished;
    const totalMs = nowMs() - start;
    return { jobsPerSecond: JOBS / (totalMs / 1000), addsPerSecond: JOBS / (addedMs / 1000) };
  } finally {
    await worker.close();
    await queue.close();
    await environment.clean();
  }
}

async function documentLatency(target: Target): Promise<number[]> {
  const stack = await startBenchStack(
    { QUEUE_BACKEND: target.backend, ...target.env },
    { serverDatabaseUrl: target.serverDatabaseUrl },
  );
  try {
    const client = await ApiClient.register(stack.baseUrl);
    await sequential(client, await client.createKnowledgebase('Warm-up'), WARM_UP_DOCUMENTS);
    const samples = await sequential(client, await client.createKnowledgebase('Latency'), DOCUMENTS);
    return samples.map((sample) => sample.activeMs);
  } finally {
    await stack.close();
  }
}

/** Resident memory of a postgres server: the postmaster and every process it started, from /proc. */
function serverRssBytes(postmasterPid: number): number {
  const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmasterPid)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter(Boolean);
  return [postmasterPid, ...pids].reduce((sum, pid) => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return sum + (match ? Number(match[1]) * 1024 : 0);
    } catch {
      return sum;
    }
  }, 0);
}

async function main(): Promise<void> {
  const targets: Target[] = [{ label: 'Redis (one server)', backend: 'redis' }];
  let cluster: LocalRedisCluster | undefined;
  if (process.env.BENCH_CLUSTER !== '0' && hasRedisServer()) {
    cluster = await LocalRedisCluster.start();
    onInterrupt(() => cluster!.stop());
    targets.push({
      label: 'Redis Cluster, 3 masters + 3 replicas',
      backend: 'redis',
      env: { REDIS_CLUSTER_NODES: cluster.seedNodes },
    });
  }
  targets.push({ label: 'PostgreSQL 127.0.0.1:5432', backend: 'postgres' });
  const embeddedNotes: string[] = [];
  let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  if (process.env.BENCH_EMBEDDED !== '0') {
    // A first start, in a directory of its own: initdb, then the server.
    const scratch = mkdtempSync(join(tmpdir(), 'va-bench-pg-'));
    // Traversable by the `postgres` user the server runs as when this runs as root.
    chmodSync(scratch, 0o755);
    try {
      const first = await startEmbeddedPostgres({ dataDir: join(scratch, 'data'), port: 54330 });
      embeddedNotes.push(`Embedded PostgreSQL, first start (initdb included): ${first.startMs} ms.`);
      await first.stop();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    embedded = await startEmbeddedPostgres();
    embeddedNotes.push(
      `Embedded PostgreSQL, start of .local/postgres${embedded.created ? ' (created now)' : ''}: ` +
        `${embedded.startMs} ms; ${fixed(serverRssBytes(embedded.pid) / MIB)} MiB resident idle ` +
        `(postmaster and its processes).`,
    );
    targets.push({
      label: 'embedded PostgreSQL :54329',
      backend: 'postgres',
      serverDatabaseUrl: 'postgres://postgres@127.0.0.1:54329/postgres',
    });
  }
  try {
    const rows: (string | number)[][] = [];
    for (const target of targets) {
      const jobs = await emptyJobs(target);
      const latencies = await documentLatency(target);
      rows.push([
        target.label,
        fixed(jobs.jobsPerSecond, 0),
        fixed(jobs.addsPerSecond, 0),
        fixed(percentile(latencies, 50)),
        fixed(percentile(latencies, 95)),
      ]);
      if (embedded && target.serverDatabaseUrl) {
        embeddedNotes.push(
          `Embedded PostgreSQL after its runs: ${fixed(serverRssBytes(embedded.pid) / MIB)} MiB resident.`,
        );
      }
    }
    printTable(
      'Queue backends: empty jobs and one-page TXT create -> active',
      ['backend', 'empty jobs/s (add -> completed)', 'adds/s', 'TXT p50 ms', 'TXT p95 ms'],
      rows,
      [
        `${JOBS} empty jobs added in batches of ${BATCH}, one worker, concurrency 4; ` +
          `${DOCUMENTS} one-page TXT uploads one after another after ${WARM_UP_DOCUMENTS} warm-up, polled every 10 ms.`,
        `Extraction threads started from ${extractionThreadFrom}.`,
        ...embeddedNotes,
      ],
    );
  } finally {
    await embedded?.stop();
    await cluster?.stop();
  }
}

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

runMain(main);
