import request from 'supertest';
import { createApiApp } from '../apps/api/src/api.app';
import { createAccount } from './support/factories';
import { AppProcess, freePort } from './support/app-process';
import { type Stack, scrapeApiMetrics, startStack, testConfig } from './support/stack';
import { QUEUE_BACKEND } from './support/test-environment';
import { JobQueue, Queues } from '@app/jobs';
import { UNTIL_STALLED, waitFor, waitForDocument } from './support/wait-for';

describe('Health and readiness', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('API liveness answers without a token and without touching dependencies', async () => {
    const response = await stack.http.get('/api/health').expect(200);
    expect(response.body).toEqual({
      status: 'ok',
      checks: { process: { status: 'up', uptime_seconds: expect.any(Number) } },
    });
  });

  it('API readiness checks Postgres and the queue backend, naming it (and Redis only while it carries the queues)', async () => {
    const response = await stack.http.get('/api/health/ready').expect(200);
    expect(response.body).toEqual({
      status: 'ok',
      checks: {
        database: { status: 'up', latency_ms: expect.any(Number) },
        shutdown: { status: 'up' },
        queue_backend: {
          status: 'up',
          latency_ms: expect.any(Number),
          backend: QUEUE_BACKEND,
          location:
            QUEUE_BACKEND === 'redis'
              ? expect.stringMatching(/^127\.0\.0\.1:6379 prefix /)
              : expect.stringMatching(/ schema bullmq$/),
        },
        ...(QUEUE_BACKEND === 'redis' ? { redis: { status: 'up', latency_ms: expect.any(Number) } } : {}),
      },
    });
  });

  it('worker serves the same paths on its own port, with its queues’ state', async () => {
    const worker = request(stack.worker!.getHttpServer());
    await worker.get('/api/health').expect(200);
    const ready = await worker.get('/api/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
    expect(ready.body.checks.queue_backend).toMatchObject({ status: 'up', backend: QUEUE_BACKEND });
    expect(ready.body.checks.queues).toMatchObject({
      status: 'up',
      queues: { maintenance: { waiting: expect.any(Number), active: expect.any(Number), failed: expect.any(Number) } },
    });
  });

  it('readiness answers 503 naming the dependency that is down', async () => {
    const config = testConfig({ QUEUE_BACKEND: 'redis', REDIS_URL: 'redis://127.0.0.1:1' });
    const app = await createApiApp(config);
    await app.init();
    try {
      const response = await request(app.getHttpServer()).get('/api/health/ready').expect(503);
      expect(response.body.status).toBe('error');
      expect(response.body.checks.database.status).toBe('up');
      expect(response.body.checks.redis).toEqual({ status: 'down', error: expect.any(String) });
      expect(response.body.checks.queue_backend).toEqual({ status: 'down', error: expect.any(String) });
      await request(app.getHttpServer()).get('/api/health').expect(200);
    } finally {
      await app.close();
    }
  });
});

describe('Metrics', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('exposes request timings by route pattern on the API, on its metrics port only', async () => {
    await stack.http.get('/api/health').expect(200);
    await stack.http.get('/api/user/knowledgebases/123').expect(401);
    const response = await scrapeApiMetrics(stack.api);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/api\/health"[^}]*\} \d+/);
    expect(text).toMatch(/route="\/api\/user\/knowledgebases\/:id",status="401"/);
    // The public port, which a load balancer exposes, has no metrics route; a scrape is not a timed request.
    await stack.http.get('/api/metrics').expect(404);
    expect(await (await scrapeApiMetrics(stack.api)).text()).not.toContain('route="/api/metrics"');
  });

  it('keeps each app to its own metrics: no job metrics on the API, no HTTP timings on the worker', async () => {
    const api = await (await scrapeApiMetrics(stack.api)).text();
    expect(api).toContain('db_pool_connections{state="in_use"}');
    expect(api).toContain('db_pool_waiting_requests');
    expect(api).toContain(`queue_backend_up{backend="${QUEUE_BACKEND}"} 1`);
    expect(api).not.toContain('jobs_finished_total');
    expect(api).not.toContain('queue_jobs');
    const worker = (await request(stack.worker!.getHttpServer()).get('/api/metrics').expect(200)).text;
    expect(worker).not.toContain('http_request_duration_seconds');
    expect(worker).toContain('db_pool_connections');
  });

  it('counts queued jobs by state at scrape time, and documents by type and final outcome', async () => {
    const account = await createAccount(stack);
    const knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Metrics' }).expect(201)
    ).body.data.id;
    const upload = (name: string, content: Buffer) =>
      stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .field('name', name)
        .field('type', 'pdf')
        .attach('file', content, `${name}.pdf`)
        .expect(201);
    const broken = (await upload('broken', Buffer.from('%PDF-1.7 this is not a real PDF'))).body.data.id;
    await waitForDocument(stack, account, knowledgebase, broken);

    const worker = (await request(stack.worker!.getHttpServer()).get('/api/metrics').expect(200)).text;
    expect(worker).toMatch(/queue_jobs\{queue="documents",state="waiting"\} \d+/);
    expect(worker).toMatch(/queue_jobs\{queue="maintenance",state="delayed"\} \d+/);
    // No large file in work once the documents are done.
    expect(worker).toMatch(/large_files_in_work\{state="active"\} 0/);
    expect(worker).toMatch(/large_files_in_work\{state="waiting"\} 0/);
    expect(worker).toMatch(/documents_processed_total\{type="pdf",outcome="failed"\} 1/);
    // A document that ends failed is a failed job, not a completed one.
    expect(worker).toMatch(/jobs_finished_total\{queue="documents",job="process-document",outcome="failed"\} 1/);
    expect(worker).not.toMatch(/jobs_finished_total\{queue="documents",job="process-document",outcome="completed"\}/);
    expect(worker).toMatch(/job_wait_seconds_count\{queue="documents",job="process-document"\} 1/);
    expect(worker).toMatch(/job_duration_seconds_count\{queue="documents",job="process-document"\} 1/);
    // The queue (and so its dashboard) says failed as well, after one attempt: the failure is the file's, not
    // something a retry could mend.
    const job = await waitFor(async () => {
      const failed = await stack.api.get(JobQueue).queue(Queues.documents).getJobs(['failed']);
      return failed.find((each) => (each.data as { documentId?: number }).documentId === broken);
    }, 10_000);
    expect({ state: await job.getState(), attempts: job.attemptsMade }).toEqual({ state: 'failed', attempts: 1 });
  }, 60_000);
});

describe('The API process’s metrics listener', () => {
  let api: AppProcess | undefined;
  afterAll(() => api?.stop());

  it(
    'serves /api/metrics on METRICS_PORT alone, names it once at boot, and writes no line per scrape',
    async () => {
      const metricsPort = await freePort();
      api = await AppProcess.start({ LOG_LEVEL: 'info', METRICS_PORT: String(metricsPort) });
      const scrape = () => fetch(`http://127.0.0.1:${metricsPort}/api/metrics`);
      for (let scrapes = 0; scrapes < 3; scrapes++) expect((await scrape()).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/health`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/metrics`, { method: 'POST' })).status).toBe(405);
      expect((await fetch(`${api.baseUrl}/metrics`)).status).toBe(404);
      // A request line is written when its response closes: one for a public request sent after the scrapes shows
      // that the scrapes' lines would have been written by then.
      await fetch(`${api.baseUrl}/user/api-keys`);
      const lines = await waitFor(async () => {
        const parsed = api!.output
          .join('')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { msg?: string; req?: { path?: string } });
        return parsed.some((line) => line.req?.path === '/api/user/api-keys') ? parsed : undefined;
      }, 10_000);
      expect(lines.filter((line) => line.req?.path?.includes('metrics'))).toEqual([]);
      expect(lines.filter((line) => line.msg?.startsWith('Metrics on '))).toEqual([
        expect.objectContaining({ msg: `Metrics on http://localhost:${metricsPort}/api/metrics` }),
      ]);
    },
    UNTIL_STALLED,
  );
});
