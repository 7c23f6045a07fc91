/**
 * List throughput with reads on a streaming replica against the primary alone (not a timed test). A private
 * primary and a `pg_basebackup` standby (test/support/streaming-replica.ts: the machine's PostgreSQL binaries, free
 * loopback ports, a temporary directory removed afterwards) hold one account with BENCH_REPLICA_CALLS calls (default
 * 1,000,000); the built API runs on the primary alone and, beside it, with DATABASE_REPLICA_URLS, and the two serve
 * the same list requests from as many connections in turns. Both servers share this machine's cores, so
 * the replica adds no capacity here: the run shows what routing costs and where the reads went.
 *
 *   npm run bench:read-replicas
 */
import { Client } from 'pg';
import { postgresBinaries, startStreamingPair } from '../test/support/streaming-replica';
import { seedCalls } from './support/call-seed';
import { combineLoads, type LoadResult, runLoad } from './support/http-load';
import { API_ENTRY, apiNodeArguments, freePort, productionEnv, startServer, waitForHttp } from './support/processes';
import { ApiClient, createBenchEnvironment } from './support/stack';
import { fixed, printTable, runMain } from './support/report';

const CALLS = Number(process.env.BENCH_REPLICA_CALLS ?? 1_000_000);
const CONNECTIONS = 8;
const SECONDS = 5;
const ROUNDS = 3;
const PATHS = ['/api/user/calls', '/api/user/calls?status=busy', '/api/user/calls?type=web'];

async function main(): Promise<void> {
  const binaries = postgresBinaries();
  if (!binaries) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const pair = await startStreamingPair(binaries, 'unused');
  try {
    const server = new URL(pair.primaryUrl);
    server.pathname = '/postgres';
    const environment = await createBenchEnvironment({ serverDatabaseUrl: server.toString() });
    const replicaUrl = new URL(pair.replicaUrl);
    replicaUrl.pathname = `/${environment.name}`;
    try {
      const start = async (port: number, replicas: boolean) => {
        const api = startServer([...apiNodeArguments(), API_ENTRY], {
          ...productionEnv(environment),
          PORT: String(port),
          ...(replicas ? { DATABASE_REPLICA_URLS: replicaUrl.toString() } : {}),
        });
        const origin = `http://127.0.0.1:${port}`;
        try {
          await waitForHttp(`${origin}/api/health`, api.child);
        } catch (error) {
          await api.stop();
          throw error;
        }
        return { api, origin };
      };
      // The primary-alone API keeps one port, so the client registered on it serves every run.
      const primaryPort = await freePort();
      const setup = await start(primaryPort, false);
      const client = await ApiClient.register(setup.origin).finally(() => setup.api.stop());
      const seeding = await start(primaryPort, false);
      const [me, assistantId] = await Promise.all([
        client.request('GET', '/api/user/me'),
        client.createOutboundAssistant(),
      ]).finally(() => seeding.api.stop());
      const seeded = await seedCalls(environment.databaseUrl, {
        accountId: me.data.id,
        assistantId,
        accounts: 1,
        perAccount: CALLS,
      });
      await pair.caughtUp(600_000);
      console.log(`seeded ${CALLS} calls in ${fixed(seeded.seconds)} s; the replica has replayed them`);

      // Both APIs at once, taking turns a round at a time, so the shared machine's stalls fall on each alike.
      const alone = await start(primaryPort, false);
      const routed = await start(await freePort(), true).catch(async (error) => {
        await alone.api.stop();
        throw error;
      });
      const measured: { alone: LoadResult[]; routed: LoadResult[]; onReplica: number }[] = [];
      try {
        await replicaInUse(routed.origin);
        for (const path of PATHS) {
          const rounds = { alone: [] as LoadResult[], routed: [] as LoadResult[], onReplica: 0 };
          for (const target of [alone, routed])
            await runLoad(load(target.origin, client, path, 2, target.api.child.pid!));
          for (let round = 0; round < ROUNDS; round++) {
            rounds.alone.push(await runLoad(load(alone.origin, client, path, SECONDS, alone.api.child.pid!)));
            const before = await replicaReads(replicaUrl.toString());
            rounds.routed.push(await runLoad(load(routed.origin, client, path, SECONDS, routed.api.child.pid!)));
            rounds.onReplica += (await replicaReads(replicaUrl.toString())) - before;
          }
          measured.push(rounds);
        }
      } finally {
        await Promise.all([alone.api.stop(), routed.api.stop()]);
      }
      printTable(
        `GET the calls of one account with ${CALLS}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s a list and server in turns; primary and replica on one machine`,
        [
          'list',
          'reads on',
          'requests/s',
          'p50 ms',
          'p99 ms',
          'requests/s vs primary alone',
          'replica transactions/request',
        ],
        PATHS.flatMap((path, index) => {
          const reference = combineLoads(measured[index].alone);
          const routedResult = combineLoads(measured[index].routed);
          return [
            row(path, 'primary alone', reference, reference, ''),
            row(path, 'replica', routedResult, reference, fixed(measured[index].onReplica / routedResult.requests, 2)),
          ];
        }),
      );
    } finally {
      await environment.clean();
    }
  } finally {
    pair.remove();
  }
}

function load(origin: string, client: ApiClient, path: string, seconds: number, serverPid: number) {
  return {
    origin,
    path,
    headers: { authorization: `Bearer ${client.token}` },
    connections: CONNECTIONS,
    seconds,
    serverPid,
  };
}

function row(path: string, mode: string, result: LoadResult, reference: LoadResult, onReplica: number | string) {
  if (result.errors > 0) throw new Error(`${path}: ${result.errors} requests failed`);
  return [
    path.replace('/api/user/calls', 'calls'),
    mode,
    fixed(result.perSecond, 0),
    fixed(result.p50Ms),
    fixed(result.p99Ms),
    fixed(result.perSecond / reference.perSecond, 2),
    onReplica,
  ];
}

/** Waits until the API's readiness shows the replica in use. */
async function replicaInUse(origin: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const report = (await (await fetch(`${origin}/api/health/ready`)).json()) as {
      checks: { database_replicas?: { in_use: number } };
    };
    if (report.checks.database_replicas?.in_use === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the replica did not come into use within 30 s');
}

/** Transactions the replica has run in the bench's database so far (each read the API sends it is one). */
async function replicaReads(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT xact_commit::bigint AS count FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0].count);
  } finally {
    await client.end();
  }
}

runMain(main);
