/**
 * Ingestion throughput of `PUT /api/internal/calls/{external_id}` as deployed: the built API and the built worker
 * each in their own process (production settings), driven from this process over keep-alive connections. Every
 * write is a new call that ends `completed`.
 *   1. webhook off: a write is the call's own statements;
 *   2. webhook on, no worker running: each write also queues a signed delivery;
 *   3. a worker starts and delivers that backlog to a receiver in this process on 127.0.0.1;
 *   4. webhook on with that worker delivering as the writes arrive, all on the same machine.
 *
 *   npm run bench:call-ingestion      (builds first)
 *
 * BENCH_SECONDS (default 20) and BENCH_CONNECTIONS (default 50) change the load; BENCH_WORKER_CONCURRENCY
 * (default 16) the worker's jobs at a time; BENCH_API_NODE_ARGS are Node options for the API process (for example
 * `--cpu-prof --cpu-prof-dir=bench/.cache/ingestion-profile`).
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_RUNTIME_TOKEN, callIngester, processCpuMs, type LoadResult } from './support/http-load';
import {
  API_ENTRY,
  apiNodeArguments,
  freePort,
  productionEnv,
  startServer,
  waitForHttp,
  WORKER_ENTRY,
  type ServerProcess,
} from './support/processes';
import { fixed, nowMs, printTable, runMain } from './support/report';
import { ApiClient, createBenchEnvironment } from './support/stack';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKER_CONCURRENCY = process.env.BENCH_WORKER_CONCURRENCY ?? '16';
const WARM_UP_SECONDS = 3;
const DELIVERY_DEADLINE_MS = 300_000;

async function waitForDeliveries(done: () => boolean, deadline: number): Promise<void> {
  while (!done() && nowMs() < deadline) await sleep(20);
}

async function main(): Promise<void> {
  let delivered = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      delivered++;
      response.writeHead(200).end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  const environment = await createBenchEnvironment();
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${apiPort}`;
  const common = {
    ...productionEnv(environment),
    RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN,
    PORT: String(apiPort),
    WORKER_PORT: String(workerPort),
  };
  const processes: ServerProcess[] = [];
  const startWorker = async () => {
    const worker = startServer([WORKER_ENTRY], {
      ...common,
      WORKER_CONCURRENCY,
      // The receiver is on this machine; production refuses loopback addresses.
      OUTBOUND_ALLOW_LOOPBACK: 'true',
    });
    processes.push(worker);
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, worker.child);
    return worker;
  };
  try {
    const api = startServer([...apiNodeArguments(), API_ENTRY], common);
    processes.push(api);
    await waitForHttp(`${origin}/api/health`, api.child);

    const client = await ApiClient.register(origin);
    const quietAssistant = await client.createOutboundAssistant();
    const hookedAssistant = await client.createOutboundAssistant({ webhook_url: hook, is_webhook_active: true });

    const load = callIngester({
      origin,
      serverPid: api.child.pid!,
      connections: CONNECTIONS,
      transcript: 'Hello there. I would like to book a table for two tomorrow evening.',
    });

    // 1. No webhook. 2. Webhook on, no worker running: each write queues its delivery.
    await load(quietAssistant, WARM_UP_SECONDS);
    const quiet = await load(quietAssistant, SECONDS);
    const queuedWarmUp = await load(hookedAssistant, WARM_UP_SECONDS);
    const queued = await load(hookedAssistant, SECONDS);

    // 3. A worker starts and delivers what was queued.
    const backlog = queuedWarmUp.requests + queued.requests;
    const worker = await startWorker();
    const workerCpuBefore = processCpuMs(worker.child.pid!);
    const drainStarted = nowMs();
    await waitForDeliveries(() => delivered >= backlog, drainStarted + DELIVERY_DEADLINE_MS);
    const drainSeconds = (nowMs() - drainStarted) / 1000;
    const workerCpuMs = processCpuMs(worker.child.pid!) - workerCpuBefore;
    if (delivered < backlog) throw new Error(`${delivered} of ${backlog} queued webhooks delivered in time`);

    // 4. Webhook on with the worker delivering on the same machine as the writes arrive.
    const sharedStarted = nowMs();
    const shared = await load(hookedAssistant, SECONDS);
    await waitForDeliveries(() => delivered >= backlog + shared.requests, sharedStarted + DELIVERY_DEADLINE_MS);
    const sharedLagSeconds = (nowMs() - sharedStarted) / 1000 - shared.seconds;
    if (delivered < backlog + shared.requests) throw new Error('not every webhook was delivered in time');

    const row = (name: string, result: LoadResult) => [
      name,
      result.requests,
      fixed(result.perSecond, 0),
      fixed(result.p50Ms),
      fixed(result.p99Ms),
      fixed(result.serverCpuMsPerRequest, 2),
    ];
    printTable(
      `Call ingestion, built API in its own process, ${CONNECTIONS} connections, ${SECONDS} s each`,
      ['run', 'writes', 'writes/s', 'p50 ms', 'p99 ms', 'API CPU ms/write'],
      [
        row('webhook off', quiet),
        row('webhook on, deliveries queued', queued),
        row('webhook on, worker delivering beside', shared),
      ],
      [`The last delivery of the shared run arrived ${fixed(sharedLagSeconds)} s after its last write.`],
    );
    printTable(
      `Webhook delivery of the queued backlog by one worker (${WORKER_CONCURRENCY} jobs at a time)`,
      ['queued', 'delivered in s', 'deliveries/s', 'worker CPU ms/delivery'],
      [[backlog, fixed(drainSeconds), fixed(backlog / drainSeconds, 0), fixed(workerCpuMs / backlog, 2)]],
      [
        `Load average at the end: ${loadavg()
          .map((value) => fixed(value, 2))
          .join(' ')}`,
      ],
    );
  } finally {
    await Promise.allSettled(processes.map((process) => process.stop()));
    receiver.close();
    await environment.clean();
  }
}

runMain(main);
