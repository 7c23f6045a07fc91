import { JobQueue, Queues } from '@app/jobs';
import { MetricsServer } from '@app/platform';
import { createAccount } from './support/factories';
import { scrapeApiMetrics, type Stack, startStack } from './support/stack';
import { waitFor, waitForDocument } from './support/wait-for';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('Queue dashboard', () => {
  it('is off unless an operator credential is configured', async () => {
    const stack = await startStack({ worker: false });
    try {
      await stack.http
        .get('/api/admin/queues')
        .set('Authorization', basic('ops', 'a long operator password'))
        .expect(404);
    } finally {
      await stack.close();
    }
  });

  it('is served on the metrics listener instead of the public port with QUEUE_DASHBOARD_ON=metrics, behind its credential', async () => {
    const stack = await startStack({
      worker: false,
      env: {
        QUEUE_DASHBOARD_USERNAME: 'ops',
        QUEUE_DASHBOARD_PASSWORD: 'a long operator password',
        QUEUE_DASHBOARD_VIEWER_USERNAME: 'viewer',
        QUEUE_DASHBOARD_VIEWER_PASSWORD: 'a long viewer password',
        QUEUE_DASHBOARD_ON: 'metrics',
      },
    });
    try {
      const operator = basic('ops', 'a long operator password');
      for (const path of ['/api/admin/queues', '/api/admin/queues/api/queues'])
        await stack.http.get(path).set('Authorization', operator).expect(404);
      const metrics = `http://127.0.0.1:${stack.api.get(MetricsServer).port}`;
      const page = await fetch(`${metrics}/api/admin/queues`, { headers: { Authorization: operator } });
      expect([page.status, await page.text()]).toEqual([200, expect.stringMatching(/<html/i)]);
      const queues = await fetch(`${metrics}/api/admin/queues/api/queues`, { headers: { Authorization: operator } });
      expect(queues.status).toBe(200);
      expect(
        ((await queues.json()) as { queues: { name: string }[] }).queues.map((queue) => queue.name).sort(),
      ).toEqual(Object.values(Queues).sort());
      // Its credentials as on the public port: none is 401, a viewer cannot change anything.
      const anonymous = await fetch(`${metrics}/api/admin/queues/api/queues`);
      expect([anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([
        401,
        expect.stringMatching(/^Basic/),
      ]);
      const viewerRetry = await fetch(`${metrics}/api/admin/queues/api/queues/${Queues.documents}/1/retry`, {
        method: 'PUT',
        headers: { Authorization: basic('viewer', 'a long viewer password') },
      });
      expect([viewerRetry.status, await viewerRetry.json()]).toEqual([
        403,
        { message: 'The queue dashboard is read-only for this credential.' },
      ]);
      // The metrics are still there.
      expect((await scrapeApiMetrics(stack.api)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  describe('with an operator credential', () => {
    let stack: Stack;
    const operator = basic('ops', 'a long operator password');

    beforeAll(async () => {
      stack = await startStack({
        env: {
          QUEUE_DASHBOARD_USERNAME: 'ops',
          QUEUE_DASHBOARD_PASSWORD: 'a long operator password',
          QUEUE_DASHBOARD_VIEWER_USERNAME: 'viewer',
          QUEUE_DASHBOARD_VIEWER_PASSWORD: 'a long viewer password',
          LOGIN_ATTEMPTS_PER_MINUTE: '5',
        },
      });
    });
    afterAll(() => stack.close());

    it('refuses anyone without it, including API tokens', async () => {
      for (const authorization of [undefined, basic('ops', 'wrong password here'), 'Bearer vak_whatever']) {
        const request = stack.http.get('/api/admin/queues/api/queues');
        const response = await (authorization ? request.set('Authorization', authorization) : request);
        expect(response.status).toBe(401);
        expect(response.headers['www-authenticate']).toMatch(/^Basic/);
      }
    });

    it('tells the browser to fetch nothing from elsewhere (the UI would ask Google for fonts)', async () => {
      const page = await stack.http.get('/api/admin/queues').set('Authorization', operator).expect(200);
      expect(page.headers['content-security-policy']).toContain("font-src 'self' data:");
      expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    });

    it('lets a viewer look, but not retry or remove', async () => {
      const viewer = basic('viewer', 'a long viewer password');
      const queue = stack.api.get(JobQueue).queue(Queues.documents);
      const job = await queue.add('no-such-job', {}, { attempts: 1 });
      await waitFor(async () => ((await job.getState()) === 'failed' ? true : undefined), 15_000);
      const queues = await stack.http.get('/api/admin/queues/api/queues').set('Authorization', viewer).expect(200);
      expect(queues.body.queues.map((each: { name: string }) => each.name)).toContain(Queues.documents);
      for (const action of ['retry', 'clean']) {
        await stack.http
          .put(`/api/admin/queues/api/queues/${Queues.documents}/${job.id}/${action}`)
          .set('Authorization', viewer)
          .expect(403, { message: 'The queue dashboard is read-only for this credential.' });
      }
      expect(await (await queue.getJob(job.id!))?.getState()).toBe('failed');
      await queue.remove(job.id!);
    }, 30_000);

    it('throttles guesses like the API login: counted before checking, however many arrive at once', async () => {
      // From an address of its own, so the other tests' requests do not share its count.
      const from = (index: number) =>
        stack.http
          .get('/api/admin/queues/api/queues')
          .set('X-Forwarded-For', '203.0.113.77')
          .set('Authorization', basic('ops', `wrong password ${index}`));
      const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => from(index)));
      expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
      expect(answers.find((answer) => answer.status === 429)!.headers['retry-after']).toMatch(/^\d+$/);
    }, 30_000);

    it('names a failed document’s reason by its class, and nothing of the document or its account', async () => {
      const account = await createAccount(stack);
      const knowledgebase = (
        await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Reasons' }).expect(201)
      ).body.data.id;
      const secret = 'sk_live_IN_THE_FILE_ONLY_4417';
      const document = (
        await stack.http
          .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
          .set(account.auth)
          .field('name', 'Board minutes')
          .field('type', 'pdf')
          .attach('file', Buffer.from(`Plain text, not a PDF. ${secret}`), 'board-minutes-private.pdf')
          .expect(201)
      ).body.data.id;
      // What the owner reads is as it was.
      expect(await waitForDocument(stack, account, knowledgebase, document)).toMatchObject({
        status: 'failed',
        error_message: 'The file content does not match the declared type "pdf"',
      });
      const failed = await waitFor(async () => {
        const response = await stack.http
          .get(`/api/admin/queues/api/queues?activeQueue=${Queues.documents}&status=failed&page=1&jobsPerPage=50`)
          .set('Authorization', operator)
          .expect(200);
        const queue = response.body.queues.find((each: { name: string }) => each.name === Queues.documents);
        const job = queue?.jobs.find((each: { data: { documentId?: number } }) => each.data.documentId === document);
        return job ? { job, text: JSON.stringify(response.body) } : undefined;
      }, 15_000);
      expect(failed.job.failedReason).toBe('process-document failed: content does not match the declared type');
      for (const hidden of [secret, 'board-minutes-private', 'Board minutes', account.email])
        expect(failed.text).not.toContain(hidden);
    }, 45_000);

    it('shows every queue, and lets the operator retry and remove a failed job', async () => {
      await stack.http.get('/api/admin/queues').set('Authorization', operator).expect(200).expect(/<html/i);
      const queues = await stack.http.get('/api/admin/queues/api/queues').set('Authorization', operator).expect(200);
      expect(queues.body.queues.map((queue: { name: string }) => queue.name).sort()).toEqual(
        Object.values(Queues).sort(),
      );

      const queue = stack.api.get(JobQueue).queue(Queues.documents);
      const job = await queue.add('no-such-job', {}, { attempts: 1 });
      await waitFor(async () => ((await job.getState()) === 'failed' ? true : undefined), 15_000);

      await stack.http
        .put(`/api/admin/queues/api/queues/${Queues.documents}/${job.id}/retry`)
        .set('Authorization', operator)
        .expect(204);
      await waitFor(async () => {
        const current = await queue.getJob(job.id!);
        return current && current.attemptsStarted >= 2 && (await current.getState()) === 'failed' ? true : undefined;
      }, 15_000);

      await stack.http
        .put(`/api/admin/queues/api/queues/${Queues.documents}/${job.id}/clean`)
        .set('Authorization', operator)
        .expect(204);
      expect(await queue.getJob(job.id!)).toBeUndefined();
    }, 45_000);
  });
});
