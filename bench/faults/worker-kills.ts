/**
 * A worker killed with SIGKILL mid-job, 20 times, while website documents are processed (each crawl takes a
 * couple of seconds against a slow local site), with a fresh worker started after each kill. Afterwards every
 * document must have ended `active` or `failed`, none stuck in `processing`, with no duplicate passages.
 * Runs against private Postgres and Redis servers; the API and workers run from the build (`npm run build`).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/faults/worker-kills.ts
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { fixed, printTable, runMain } from '../support/report';
import { PrivatePostgres, PrivateRedis, ServiceProcess, freePort } from './support/services';

const DOCUMENTS = 30;
const PAGES_PER_DOCUMENT = 4;
const PAGE_DELAY_MS = 400;
const KILLS = 20;

async function json(url: string, token: string, body?: object): Promise<any> {
  const response = await fetch(url, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response.json();
}

async function main(): Promise<void> {
  let pageRequests = 0;
  const site = createServer((request, response) => {
    pageRequests++;
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        `<html><body><main><h1>${request.url}</h1><p>Page ${request.url} of a slow site. ${'Text. '.repeat(200)}</p></main></body></html>`,
      );
    }, PAGE_DELAY_MS);
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  const sitePort = (site.address() as { port: number }).port;

  const postgres = await PrivatePostgres.start();
  const redis = await PrivateRedis.start();
  const workers: ServiceProcess[] = [];
  let api: ServiceProcess | undefined;
  try {
    const databaseUrl = postgres.url('voice_assistant');
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    const apiPort = await freePort();
    const env = {
      NODE_ENV: 'production',
      APP_URL: 'http://127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      CRAWL_DELAY_MS: '0',
      RATE_LIMIT_PER_MINUTE: '100000',
      SHUTDOWN_DRAIN_SECONDS: '0',
      METRICS_PORT: '0',
      // A killed worker's jobs are taken over quickly; a job lost altogether is swept soon.
      JOB_LOCK_MS: '2000',
      JOB_STALLED_CHECK_MS: '1000',
      JOB_RETRY_DELAY_MS: '500',
      DOCUMENT_STUCK_AFTER_SECONDS: '15',
      DOCUMENT_SWEEP_INTERVAL_SECONDS: '3',
    };
    api = new ServiceProcess('api', { ...env, PORT: String(apiPort) });
    api.start();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const startWorker = async () => {
      const worker = new ServiceProcess('worker', { ...env, WORKER_PORT: String(await freePort()) });
      worker.start();
      workers.push(worker);
      return worker;
    };
    let worker = await startWorker();
    for (let attempt = 0; ; attempt++) {
      const ok = await fetch(`${apiUrl}/api/health/ready`)
        .then((response) => response.ok)
        .catch(() => false);
      if (ok) break;
      if (attempt > 300) throw new Error('API did not start');
      await sleep(100);
    }
    const registered = await fetch(`${apiUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Kills',
        email: `kills-${randomBytes(4).toString('hex')}@example.com`,
        password: 'correct horse battery staple',
      }),
    }).then((response) => response.json() as Promise<{ token: string }>);
    const token: string = registered.token;
    const knowledgebase: number = (await json(`${apiUrl}/api/user/knowledgebases`, token, { name: 'Kills' })).data.id;
    for (let index = 0; index < DOCUMENTS; index++) {
      const links = Array.from({ length: PAGES_PER_DOCUMENT }, (_, page) => ({
        link: `http://127.0.0.1:${sitePort}/d${index}/p${page}`,
      }));
      await json(`${apiUrl}/api/user/knowledgebases/${knowledgebase}/documents`, token, {
        name: `Site ${index}`,
        type: 'website',
        links,
      });
    }

    const started = Date.now();
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(800 + Math.random() * 800);
      await worker.kill('SIGKILL');
      worker = await startWorker();
    }
    const killsDoneAt = Date.now();

    const database = new Client({ connectionString: databaseUrl });
    await database.connect();
    try {
      let processing = Infinity;
      while (processing > 0 && Date.now() - killsDoneAt < 180_000) {
        processing = (
          await database.query(
            `SELECT count(*)::int AS n FROM documents WHERE knowledgebase_id = $1 AND status = 'processing'`,
            [knowledgebase],
          )
        ).rows[0].n;
        if (processing > 0) await sleep(500);
      }
      const states = (
        await database.query(
          `SELECT status, count(*)::int AS n FROM documents WHERE knowledgebase_id = $1 GROUP BY status ORDER BY status`,
          [knowledgebase],
        )
      ).rows;
      const duplicates = (
        await database.query(
          `SELECT count(*)::int AS n FROM (SELECT document_id, position FROM passages WHERE knowledgebase_id = $1 GROUP BY 1, 2 HAVING count(*) > 1) d`,
          [knowledgebase],
        )
      ).rows[0].n;
      const activeWithoutPassages = (
        await database.query(
          `SELECT count(*)::int AS n FROM documents d WHERE d.knowledgebase_id = $1 AND d.status = 'active'
             AND NOT EXISTS (SELECT 1 FROM passages p WHERE p.document_id = d.id)`,
          [knowledgebase],
        )
      ).rows[0].n;
      const failedWithPassages = (
        await database.query(
          `SELECT count(*)::int AS n FROM documents d WHERE d.knowledgebase_id = $1 AND d.status = 'failed'
             AND EXISTS (SELECT 1 FROM passages p WHERE p.document_id = d.id)`,
          [knowledgebase],
        )
      ).rows[0].n;
      printTable(
        `${KILLS} SIGKILLs of the worker while ${DOCUMENTS} website documents (${PAGES_PER_DOCUMENT} pages, ${PAGE_DELAY_MS} ms each) were processed`,
        [
          'final states',
          'still processing',
          'duplicate passages',
          'active without passages',
          'failed with passages',
          'page requests',
          'kills took',
          'settled after the last kill',
        ],
        [
          [
            states.map((row) => `${row.status}: ${row.n}`).join(', '),
            processing,
            duplicates,
            activeWithoutPassages,
            failedWithPassages,
            `${pageRequests} (${DOCUMENTS * PAGES_PER_DOCUMENT} needed)`,
            `${fixed((killsDoneAt - started) / 1000)} s`,
            processing === 0 ? `${fixed((Date.now() - killsDoneAt) / 1000)} s` : 'never',
          ],
        ],
      );
      if (processing !== 0 || duplicates !== 0 || activeWithoutPassages !== 0 || failedWithPassages !== 0)
        process.exitCode = 1;
    } finally {
      await database.end();
    }
  } finally {
    await Promise.all([api, ...workers].flatMap((service) => (service ? [service.kill('SIGKILL')] : [])));
    site.close();
    await redis.stop();
    await postgres.remove();
  }
}

runMain(main);
