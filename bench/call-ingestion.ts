/**
 * Ingestion throughput of `PUT /api/internal/calls/{external_id}` as deployed: the built API and the built worker
 * each in their own process (production settings), driven from this process over keep-alive connections. Every
 * write is a new call that ends `completed`.
 *   1. webhook off: a write is the call's own statements;
 *   2. webhook on, no worker running: each write also queues a signed delivery;
 *   3. a worker starts and delivers that backlog to a receiver in this process on 127.0.0.1;
 *   4. webhook on with that worker delivering as the writes arrive, all on the same machine.
 *
 *   npm run bench:call-ingestion                          (builds first)
 *   npm run bench:call-ingestion -- --before d37ae1c      (and that commit, built aside; see support/other-build.ts)
 *
 * With a second build (`--before <commit>`, BENCH_BEFORE, or BENCH_OTHER_API and BENCH_OTHER_WORKER), both stacks run
 * at once, each with its own database, Redis prefix and worker delivering, and take turns: each round runs 1 and 4
 * on this build, then on the other (A, B, A, B, ...); the report gives each build's figures and the ratio now/before,
 * medians over the rounds (--rounds, BENCH_ROUNDS, default 3), with the CPU time of each build's API, worker and
 * PostgreSQL (its backends serving the build's database, read from /proc: a server on this machine) per write.
 *
 * --seconds (BENCH_SECONDS, default 20) and BENCH_CONNECTIONS (default 50) change the load; BENCH_WORKER_CONCURRENCY
 * (default 16) the worker's jobs at a time; BENCH_API_NODE_ARGS and BENCH_WORKER_NODE_ARGS are Node options for this
 * build's API and worker processes, BENCH_OTHER_API_NODE_ARGS and BENCH_OTHER_WORKER_NODE_ARGS the other build's (for
 * example `--cpu-prof --cpu-prof-dir=bench/.cache/ingestion-profile` to profile both builds in one run).
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as PgClient } from 'pg';
import {
  BENCH_RUNTIME_TOKEN,
  callIngester,
  backendCpuMs,
  cpuSince,
  processCpuMs,
  type LoadResult,
} from './support/http-load';
import { CURRENT_BUILD, otherBuild, type Build } from './support/other-build';
import { startBuiltStack, type BuiltStack } from './support/processes';
import { fixed, median, nowMs, printTable, runMain, setting } from './support/report';
import { ApiClient } from './support/stack';

const SECONDS = setting('seconds', 'BENCH_SECONDS', 20);
const ROUNDS = setting('rounds', 'BENCH_ROUNDS', 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WORKER_CONCURRENCY = process.env.BENCH_WORKER_CONCURRENCY ?? '16';
const WARM_UP_SECONDS = 3;
const DELIVERY_DEADLINE_MS = 300_000;
const TRANSCRIPT = 'Hello there. I would like to book a table for two tomorrow evening.';
/** What the API and the worker of every build run with, beside the production settings. */
const STACK_ENV = {
  RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN,
  WORKER_CONCURRENCY,
  // The receiver is on this machine; production refuses loopback addresses.
  OUTBOUND_ALLOW_LOOPBACK: 'true',
};

async function waitForDeliveries(done: () => boolean, deadline: number): Promise<void> {
  while (!done() && nowMs() < deadline) await sleep(20);
}

/** A receiver of webhooks in this process: each path's deliveries counted apart. */
async function startReceiver(): Promise<{
  url: (path: string) => string;
  delivered: (path: string) => number;
  close(): void;
}> {
  const counts = new Map<string, number>();
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      counts.set(request.url ?? '', (counts.get(request.url ?? '') ?? 0) + 1);
      response.writeHead(200).end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const origin = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  return {
    url: (path) => `${origin}${path}`,
    delivered: (path) => counts.get(path) ?? 0,
    close: () => receiver.close(),
  };
}

interface Driven {
  stack: BuiltStack;
  quietAssistant: number;
  hookedAssistant: number;
  hookPath: string;
  load: (assistantId: number, seconds: number) => Promise<LoadResult>;
}

/** An account on `stack` with an assistant without webhook and one whose webhook is `hookPath` of the receiver. */
async function drive(stack: BuiltStack, hook: string, hookPath: string): Promise<Driven> {
  const client = await ApiClient.register(stack.baseUrl);
  return {
    stack,
    quietAssistant: await client.createOutboundAssistant(),
    hookedAssistant: await client.createOutboundAssistant({ webhook_url: hook, is_webhook_active: true }),
    hookPath,
    load: callIngester({
      origin: stack.baseUrl,
      serverPid: stack.api.child.pid!,
      connections: CONNECTIONS,
      transcript: TRANSCRIPT,
    }),
  };
}

const loadRow = (name: string, result: LoadResult) => [
  name,
  result.requests,
  fixed(result.perSecond, 0),
  fixed(result.p50Ms),
  fixed(result.p99Ms),
  fixed(result.serverCpuMsPerRequest, 2),
];

/** This build alone: the four runs above, in order. */
async function single(receiver: Awaited<ReturnType<typeof startReceiver>>): Promise<void> {
  const stack = await startBuiltStack(CURRENT_BUILD, {
    env: STACK_ENV,
    worker: false,
  });
  try {
    const { quietAssistant, hookedAssistant, load } = await drive(stack, receiver.url('/hook'), '/hook');
    const delivered = () => receiver.delivered('/hook');

    // 1. No webhook. 2. Webhook on, no worker running: each write queues its delivery.
    await load(quietAssistant, WARM_UP_SECONDS);
    const quiet = await load(quietAssistant, SECONDS);
    const queuedWarmUp = await load(hookedAssistant, WARM_UP_SECONDS);
    const queued = await load(hookedAssistant, SECONDS);

    // 3. A worker starts and delivers what was queued.
    const backlog = queuedWarmUp.requests + queued.requests;
    const worker = await stack.startWorker();
    const workerCpuBefore = processCpuMs(worker.child.pid!);
    const drainStarted = nowMs();
    await waitForDeliveries(() => delivered() >= backlog, drainStarted + DELIVERY_DEADLINE_MS);
    const drainSeconds = (nowMs() - drainStarted) / 1000;
    const workerCpuMs = processCpuMs(worker.child.pid!) - workerCpuBefore;
    if (delivered() < backlog) throw new Error(`${delivered()} of ${backlog} queued webhooks delivered in time`);

    // 4. Webhook on with the worker delivering on the same machine as the writes arrive.
    const sharedStarted = nowMs();
    const shared = await load(hookedAssistant, SECONDS);
    await waitForDeliveries(() => delivered() >= backlog + shared.requests, sharedStarted + DELIVERY_DEADLINE_MS);
    const sharedLagSeconds = (nowMs() - sharedStarted) / 1000 - shared.seconds;
    if (delivered() < backlog + shared.requests) throw new Error('not every webhook was delivered in time');

    printTable(
      `Call ingestion, built API in its own process, ${CONNECTIONS} connections, ${SECONDS} s each`,
      ['run', 'writes', 'writes/s', 'p50 ms', 'p99 ms', 'API CPU ms/write'],
      [
        loadRow('webhook off', quiet),
        loadRow('webhook on, deliveries queued', queued),
        loadRow('webhook on, worker delivering beside', shared),
      ],
      [`The last delivery of the shared run arrived ${fixed(sharedLagSeconds)} s after its last write.`],
    );
    printTable(
      `Webhook delivery of the queued backlog by one worker (${WORKER_CONCURRENCY} jobs at a time)`,
      ['queued', 'delivered in s', 'deliveries/s', 'worker CPU ms/delivery'],
      [[backlog, fixed(drainSeconds), fixed(backlog / drainSeconds, 0), fixed(workerCpuMs / backlog, 2)]],
    );
  } finally {
    await stack.close();
  }
}

interface Round {
  quiet: LoadResult;
  hooked: LoadResult;
  /** Writes a second until the last of their webhooks arrived: the writes over the run and the lag after it. */
  deliveredPerSecond: number;
  workerCpuMsPerDelivery: number;
  /** PostgreSQL's CPU time for the build's database over the run without webhook, a write. */
  databaseCpuMsPerQuietWrite: number;
  /** The same over the run with webhooks, until the last delivery: a write and its delivery. */
  databaseCpuMsPerHookedWrite: number;
}

/** This build and `other` side by side, taking turns in each round. */
async function compared(receiver: Awaited<ReturnType<typeof startReceiver>>, other: Build): Promise<void> {
  const builds = [CURRENT_BUILD, other];
  const stacks: BuiltStack[] = [];
  /** A connection to each build's database, reading its backends' CPU time (`backendCpuMs`). */
  const readers: PgClient[] = [];
  try {
    for (const build of builds) {
      stacks.push(await startBuiltStack(build, { env: STACK_ENV }));
    }
    const driven: Driven[] = [];
    for (const [index, stack] of stacks.entries()) {
      driven.push(await drive(stack, receiver.url(`/hook/${index}`), `/hook/${index}`));
      readers.push(new PgClient({ connectionString: stack.environment.databaseUrl }));
      await readers[index].connect();
    }
    const expected = driven.map(() => 0);
    const deliverAll = async (index: number) => {
      const path = driven[index].hookPath;
      await waitForDeliveries(() => receiver.delivered(path) >= expected[index], nowMs() + DELIVERY_DEADLINE_MS);
      if (receiver.delivered(path) < expected[index]) {
        throw new Error(`${builds[index].label}: ${receiver.delivered(path)} of ${expected[index]} webhooks delivered`);
      }
    };
    const turn = async (index: number, seconds: number): Promise<Round> => {
      const { stack, load, quietAssistant, hookedAssistant } = driven[index];
      const backends = () => backendCpuMs(readers[index], stack.environment.name);
      const databaseCpuBefore = await backends();
      const quiet = await load(quietAssistant, seconds);
      const databaseCpuBetween = await backends();
      const workerCpuBefore = processCpuMs(stack.worker!.child.pid!);
      const started = nowMs();
      const hooked = await load(hookedAssistant, seconds);
      expected[index] += hooked.requests;
      await deliverAll(index);
      const elapsed = (nowMs() - started) / 1000;
      return {
        quiet,
        hooked,
        deliveredPerSecond: hooked.requests / elapsed,
        workerCpuMsPerDelivery: (processCpuMs(stack.worker!.child.pid!) - workerCpuBefore) / hooked.requests,
        databaseCpuMsPerQuietWrite: cpuSince(databaseCpuBefore, databaseCpuBetween) / quiet.requests,
        databaseCpuMsPerHookedWrite: cpuSince(databaseCpuBetween, await backends()) / hooked.requests,
      };
    };
    for (const index of driven.keys()) await turn(index, WARM_UP_SECONDS);
    const rounds: Round[][] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await turnAll(turn, driven.length));

    const figures: { name: string; of: (round: Round) => number; digits: number }[] = [
      { name: 'writes/s, webhook off', of: (round) => round.quiet.perSecond, digits: 0 },
      { name: 'writes/s, webhook on, worker delivering', of: (round) => round.hooked.perSecond, digits: 0 },
      { name: 'writes/s with webhooks delivered', of: (round) => round.deliveredPerSecond, digits: 0 },
      { name: 'p99 ms, webhook on', of: (round) => round.hooked.p99Ms, digits: 1 },
      { name: 'API CPU ms/write, webhook on', of: (round) => round.hooked.serverCpuMsPerRequest, digits: 2 },
      { name: 'worker CPU ms/delivery', of: (round) => round.workerCpuMsPerDelivery, digits: 2 },
      { name: 'PostgreSQL CPU ms/write, webhook off', of: (round) => round.databaseCpuMsPerQuietWrite, digits: 2 },
      {
        name: 'PostgreSQL CPU ms/write and delivery',
        of: (round) => round.databaseCpuMsPerHookedWrite,
        digits: 2,
      },
    ];
    printTable(
      `Call ingestion, ${builds.map((build) => build.label).join(' and ')} side by side: ${ROUNDS} rounds, ` +
        `${SECONDS} s webhook off then ${SECONDS} s webhook on each, ${CONNECTIONS} connections (medians over rounds)`,
      ['figure', ...builds.map((build) => build.label), 'ratio now/before'],
      figures.map(({ name, of, digits }) => [
        name,
        ...builds.map((_, index) => fixed(median(rounds.map((round) => of(round[index]))), digits)),
        fixed(median(rounds.map((round) => of(round[0]) / of(round[1]))), 2),
      ]),
      [
        'Ratio: the median of the rounds\' ratios. "with webhooks delivered": the run\'s writes over the time until',
        'the last of their webhooks arrived. Each round:',
        ...rounds.map(
          (round, index) =>
            `  ${index + 1}: ${builds
              .map(
                (build, at) =>
                  `${build.label} ${fixed(round[at].quiet.perSecond, 0)} / ${fixed(round[at].hooked.perSecond, 0)} / ` +
                  `${fixed(round[at].deliveredPerSecond, 0)} writes/s`,
              )
              .join('; ')}`,
        ),
        `other build: ${other.root}`,
      ],
    );
  } finally {
    await Promise.allSettled(readers.map((reader) => reader.end()));
    await Promise.allSettled(stacks.map((stack) => stack.close()));
  }
}

/** One round: every build's turn, one after the other (A, B). */
async function turnAll(turn: (index: number, seconds: number) => Promise<Round>, count: number): Promise<Round[]> {
  const round: Round[] = [];
  for (let index = 0; index < count; index++) round.push(await turn(index, SECONDS));
  return round;
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const other = await otherBuild();
  try {
    if (other) await compared(receiver, other);
    else await single(receiver);
  } finally {
    receiver.close();
    await other?.close();
  }
}

runMain(main, { comparesBuilds: true });
