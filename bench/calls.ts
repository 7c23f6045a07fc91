/**
 * Call lists at tens of millions of rows (not a timed test): one account with a tenth of BENCH_CALLS calls (default
 * 20,000,000, among ten accounts), over HTTP next to the same SQL run bare as the API runs it (see
 * support/list-cases.ts); then call ingestion alone and beside a retention run removing the oldest 1,000,000 calls
 * through the worker's own statement, and the lists again while that run goes on.
 *
 *   npm run bench:calls [-- requests per case]
 *   BENCH_CALLS=5000000 npm run bench:calls
 */
import { Client, Pool } from 'pg';
import { BENCH_RUNTIME_TOKEN, callIngester, type LoadResult, runLoad } from './support/http-load';
import { bareServerCases, LIST_CASE_HEADERS, type ListCase, measureListCases } from './support/list-cases';
import { startBareListServer, startBuiltApi } from './support/processes';
import { seedCalls } from './support/call-seed';
import { ApiClient } from './support/stack';
import { fixed, nowMs, percentile, printTable, runMain } from './support/report';
import { CALL_PURGE_BATCH, CALL_PURGE_REST } from '../apps/worker/src/calls/call-purge-pacing';

const TOTAL_CALLS = Number(process.env.BENCH_CALLS ?? 20_000_000);
const ACCOUNTS = 10;
const ACCOUNT_CALLS = TOTAL_CALLS / ACCOUNTS;
/** Calls of each account are 5 s apart from this instant on. */
const SEEDED_FROM = Date.parse('2026-01-01T00:00:00Z');
const RETENTION_REMOVES = Math.min(1_000_000, TOTAL_CALLS / 2);
const INGESTION_CONNECTIONS = 16;
const INGESTION_SECONDS = 20;
/** Alone and beside the retention run, in turn. */
const INGESTION_ROUNDS = 3;
const LIST_SECONDS = 5;

async function main(): Promise<void> {
  const stack = await startBuiltApi({ RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN });
  const client = new Client({ connectionString: stack.databaseUrl });
  await client.connect();
  // The bare reference: two connections, as the API runs a page and its total at once.
  const bare = new Pool({ connectionString: stack.databaseUrl, max: 2 });
  let stopBareHttp: (() => Promise<void>) | undefined;
  try {
    const api = await ApiClient.register(stack.baseUrl);
    const me = await api.request('GET', '/api/user/me');
    const assistantId = await api.createOutboundAssistant();

    const seeded = await seedCalls(stack.databaseUrl, {
      accountId: me.data.id,
      assistantId,
      accounts: ACCOUNTS,
      perAccount: ACCOUNT_CALLS,
    });
    console.log(
      `seeded ${TOTAL_CALLS} calls in ${fixed(seeded.seconds)} s ` +
        `(rows ${fixed(seeded.rowsSeconds)} s, indexes ${fixed(seeded.indexesSeconds)} s)`,
    );
    const [{ phone }] = (
      await client.query(
        `SELECT substring(client_phone_number, 4, 6) AS phone FROM calls WHERE user_id = $1 AND external_id LIKE 'seed-%' LIMIT 1 OFFSET ${ACCOUNT_CALLS / 2}`,
        [me.data.id],
      )
    ).rows;
    const user = me.data.id;
    const page = (where = '', values: unknown[] = [], order = 'id DESC', offset = 0): [string, unknown[]] => [
      `SELECT * FROM calls WHERE user_id = $1 ${where} ORDER BY ${order} LIMIT 15 OFFSET ${offset}`,
      [user, ...values],
    ];
    const counter = (bucket: string): [string, unknown[]] => [
      `SELECT sum(total) FROM call_counts WHERE user_id = $1 AND bucket = $2`,
      [user, bucket],
    ];
    const numberFilter =
      'AND client_phone_number LIKE $2 AND account_number_trigrams(user_id, client_phone_number) @> account_number_trigrams($1::int, $3::text)';
    const cases: ListCase[] = [
      { name: 'first page', query: '', sql: [page(), counter('')] },
      { name: 'page 1,000', query: 'page=1000', sql: [page('', [], 'id DESC', 14985), counter('')] },
      { name: 'status', query: 'status=busy', sql: [page('AND status = $2', ['busy']), counter('s:busy')] },
      { name: 'type', query: 'type=web', sql: [page('AND type = $2', ['web']), counter('t:web')] },
      {
        name: 'assistant',
        query: `assistant_id=${assistantId}`,
        sql: [page('AND assistant_id = $2', [assistantId]), counter(`a:${assistantId}`)],
      },
      {
        name: 'campaign (none match)',
        query: 'campaign_id=1',
        sql: [page('AND campaign_id = $2', [1]), counter('c:1')],
      },
      {
        name: '20-day range',
        query: 'date_from=2026-01-10&date_to=2026-01-29',
        sql: [
          page(
            'AND created_at >= $2::date AND created_at < $3::date + 1',
            ['2026-01-10', '2026-01-29'],
            'created_at DESC, id DESC',
          ),
          [
            `SELECT sum(total) FROM call_counts WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [user, 'd:2026-01-10', 'd:2026-01-29'],
          ],
        ],
      },
      {
        name: 'client number (partial)',
        query: `phone_number=${phone}`,
        sql: [
          page(numberFilter, [`%${phone}%`, phone]),
          [`SELECT count(*) FROM calls WHERE user_id = $1 ${numberFilter}`, [user, `%${phone}%`, phone]],
        ],
      },
    ];
    const samples = Number(process.argv[2] ?? 200);
    const bareHttp = await startBareListServer(stack.databaseUrl, {
      LIST_CASES: bareServerCases('/api/user/calls', cases),
      QUEUE_PREFIX: stack.queuePrefix,
      REDIS_URL: stack.redisUrl,
    });
    stopBareHttp = () => bareHttp.process.stop();
    const rows = await measureListCases(api, bare, '/api/user/calls', cases, samples, bareHttp.baseUrl);
    printTable(
      `GET /api/user/calls, one account with ${ACCOUNT_CALLS} of ${TOTAL_CALLS} calls (${samples} requests a case, sequential)`,
      LIST_CASE_HEADERS,
      rows,
    );

    // Ingestion alone, then beside a retention run removing the oldest RETENTION_REMOVES calls (a tenth of each
    // account's oldest), batch by batch through the worker's statement, with the lists measured again meanwhile.
    const ingestCalls = callIngester({
      origin: stack.baseUrl,
      serverPid: stack.process.child.pid!,
      connections: INGESTION_CONNECTIONS,
    });
    const ingest = () => ingestCalls(assistantId, INGESTION_SECONDS);
    // One list request at a time for LIST_SECONDS a case, through the API only: while rows go, the bare server's
    // total would rightly differ from the API's a moment earlier.
    const lists = async () => {
      const results: LoadResult[] = [];
      for (const item of cases.filter((candidate) => candidate.name !== 'page 1,000')) {
        const result = await runLoad({
          origin: stack.baseUrl,
          path: `/api/user/calls${item.query ? `?${item.query}` : ''}`,
          headers: { authorization: `Bearer ${api.token}` },
          connections: 1,
          seconds: LIST_SECONDS,
          serverPid: stack.process.child.pid!,
        });
        if (result.errors > 0) throw new Error(`${item.name}: ${result.errors} requests failed`);
        results.push(result);
      }
      return results;
    };
    await ingest(); // warm-up
    const cutoff = new Date(SEEDED_FROM + (RETENTION_REMOVES / ACCOUNTS) * 5000 + 1000);
    // A pool of one: a connection the shared server ends is replaced, and the batch (idempotent) runs again.
    const purger = new Pool({ connectionString: stack.databaseUrl, max: 1 });
    purger.on('error', () => undefined);
    const batchMs: number[] = [];
    // The run is held between batches while ingestion is measured alone, so that alone and beside alternate
    // within the one run: a single pair of 20 s measurements moved by a third from one run to the next.
    let held: Promise<void> | undefined;
    let release: (() => void) | undefined;
    let batchDone: Promise<void> = Promise.resolve();
    const hold = async () => {
      held ??= new Promise<void>((resolve) => (release = resolve));
      await batchDone;
    };
    const resume = () => {
      release?.();
      held = undefined;
    };
    let purgeStarted = 0;
    let purgeEnded = false;
    let heldMs = 0;
    await hold();
    const purge = (async () => {
      let removed = 0;
      let lost = 0;
      for (;;) {
        if (held) {
          const waited = nowMs();
          await held;
          if (purgeStarted) heldMs += nowMs() - waited;
        }
        purgeStarted ||= nowMs();
        const started = nowMs();
        let finish!: () => void;
        batchDone = new Promise((resolve) => (finish = resolve));
        const result = await purger
          .query(`SELECT purge_calls_before($1, $2) AS count`, [cutoff, CALL_PURGE_BATCH])
          .catch((error: { code?: string }) => {
            if (++lost > 5 || (error.code && !error.code.startsWith('57'))) throw error;
            return undefined;
          })
          .finally(() => finish());
        if (!result) continue;
        const [{ count }] = result.rows;
        batchMs.push(nowMs() - started);
        removed += count;
        if (count < CALL_PURGE_BATCH) {
          purgeEnded = true;
          return { removed, seconds: (nowMs() - purgeStarted - heldMs) / 1000 };
        }
        // The worker's pacing.
        await new Promise((resolve) => setTimeout(resolve, (nowMs() - started) * CALL_PURGE_REST));
      }
    })();
    purge.catch(() => undefined); // awaited below; a failure is reported there
    // Round 1 measures the lists too (alone, then beside the run); rounds 2 and 3 ingestion only.
    const rounds: { alone: LoadResult; beside: LoadResult; ended: boolean }[] = [];
    let listsAlone: LoadResult[] = [];
    let listsBeside: LoadResult[] = [];
    let listsWhile = 0;
    for (let round = 1; round <= INGESTION_ROUNDS; round++) {
      await hold();
      const [alone, aloneLists] = await Promise.all([ingest(), round === 1 ? lists() : []]);
      resume();
      const [beside, besideLists] = await Promise.all([ingest(), round === 1 ? lists() : []]);
      if (round === 1) {
        [listsAlone, listsBeside, listsWhile] = [aloneLists, besideLists, nowMs() - purgeStarted];
      }
      rounds.push({ alone, beside, ended: purgeEnded });
    }
    resume();
    const purged = await purge;
    await purger.end();
    const ratios = rounds.map(({ alone, beside }) => beside.p99Ms / alone.p99Ms);
    const throughout = ratios.filter((_, index) => !rounds[index].ended);
    printTable(
      `PUT /api/internal/calls/{id}, ${INGESTION_CONNECTIONS} connections for ${INGESTION_SECONDS} s, table of ${TOTAL_CALLS} calls, ` +
        `alone and beside the retention run in turn (round 1 with the lists below at once)`,
      ['round', 'run', 'writes', 'writes/s', 'p50 ms', 'p99 ms', 'p99 / alone'],
      rounds.flatMap(({ alone, beside, ended }, index) => [
        [index + 1, 'alone', alone.requests, fixed(alone.perSecond, 0), fixed(alone.p50Ms), fixed(alone.p99Ms), '1.00'],
        [
          index + 1,
          ended ? 'beside the retention run (it ended meanwhile)' : 'beside the retention run',
          beside.requests,
          fixed(beside.perSecond, 0),
          fixed(beside.p50Ms),
          fixed(beside.p99Ms),
          fixed(ratios[index], 2),
        ],
      ]),
      [
        throughout.length > 0
          ? `p99 beside / alone, median of the ${throughout.length} rounds the run went on throughout: ` +
            fixed(percentile(throughout, 50), 2)
          : 'the run ended during the first round: remove more calls, or pace the run more slowly',
      ],
    );
    batchMs.sort((a, b) => a - b);
    console.log(
      `retention run: ${purged.removed} calls removed in ${fixed(purged.seconds)} s of running ` +
        `(${fixed(purged.removed / purged.seconds, 0)} calls/s; batch of ${CALL_PURGE_BATCH}, rest ${CALL_PURGE_REST}x its time: ` +
        `p50 ${fixed(batchMs[Math.floor(batchMs.length / 2)])} ms, max ${fixed(batchMs[batchMs.length - 1])} ms)`,
    );
    printTable(
      `GET /api/user/calls, one request at a time for ${LIST_SECONDS} s a case, alone and beside the retention run ` +
        `(the lists ended ${fixed(listsWhile / 1000)} s into the run)`,
      ['case', 'p50 ms alone', 'p95 alone', 'p50 beside', 'p95 beside', 'p95 beside / alone'],
      cases
        .filter((candidate) => candidate.name !== 'page 1,000')
        .map((item, index) => [
          item.name,
          fixed(listsAlone[index].p50Ms),
          fixed(listsAlone[index].p95Ms),
          fixed(listsBeside[index].p50Ms),
          fixed(listsBeside[index].p95Ms),
          fixed(listsBeside[index].p95Ms / listsAlone[index].p95Ms, 2),
        ]),
    );
    const [{ rows: counted }] = [
      await client.query(`SELECT count(*)::int AS rows FROM calls WHERE user_id = $1`, [me.data.id]),
    ];
    const listed = (await api.request('GET', '/api/user/calls')) as { total: number };
    console.log(`after the run: list total ${listed.total}, rows ${counted[0].rows}`);
  } finally {
    await stopBareHttp?.();
    await client.end();
    await bare.end();
    await stack.close();
  }
}

runMain(main);
