import request from 'supertest';
import { createApiApp } from '../apps/api/src/api.app';
import { Stack, startStack, testConfig } from './support/stack';

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

  it('API readiness checks Postgres and Redis', async () => {
    const response = await stack.http.get('/api/health/ready').expect(200);
    expect(response.body).toEqual({
      status: 'ok',
      checks: {
        database: { status: 'up', latency_ms: expect.any(Number) },
        shutdown: { status: 'up' },
        redis: { status: 'up', latency_ms: expect.any(Number) },
      },
    });
  });

  it('worker serves the same paths on its own port, with its queues’ state', async () => {
    const worker = request(stack.worker!.getHttpServer());
    await worker.get('/api/health').expect(200);
    const ready = await worker.get('/api/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
    expect(ready.body.checks.queues).toMatchObject({
      status: 'up',
      queues: { maintenance: { waiting: expect.any(Number), active: expect.any(Number), failed: expect.any(Number) } },
    });
  });

  it('readiness answers 503 naming the dependency that is down', async () => {
    const config = testConfig({ REDIS_URL: 'redis://127.0.0.1:1' });
    const app = await createApiApp(config);
    await app.init();
    try {
      const response = await request(app.getHttpServer()).get('/api/health/ready').expect(503);
      expect(response.body.status).toBe('error');
      expect(response.body.checks.database.status).toBe('up');
      expect(response.body.checks.redis).toEqual({ status: 'down', error: expect.any(String) });
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

  it('exposes request timings by route pattern on the API', async () => {
    await stack.http.get('/api/health').expect(200);
    await stack.http.get('/api/user/knowledgebases/123').expect(401);
    const response = await stack.http.get('/api/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toContain('process_cpu_user_seconds_total');
    expect(response.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/api\/health"[^}]*\} \d+/);
    expect(response.text).toMatch(/route="\/api\/user\/knowledgebases\/:id",status="401"/);
  });

  it('exposes job counts on the worker', async () => {
    const worker = request(stack.worker!.getHttpServer());
    const response = await worker.get('/api/metrics').expect(200);
    expect(response.text).toContain('# TYPE jobs_finished_total counter');
  });
});
