import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppConfig } from '@app/config';
import { JobQueue } from '@app/jobs';

export const QUEUE_DASHBOARD_PATH = '/api/admin/queues';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * HTTP Basic authentication with the operator credential from configuration. Compared as digests in constant
 * time, so neither the length nor the content of the password leaks through timing.
 */
export function operatorOnly(credential: { username: string; password: string }) {
  const expected = digest(`${credential.username}:${credential.password}`);
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const [scheme, encoded] = (request.headers.authorization ?? '').split(' ');
    const given = scheme === 'Basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    if (given && timingSafeEqual(digest(given), expected)) return done();
    void reply
      .header('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"')
      .status(401)
      .send({ message: 'Unauthenticated.' });
  };
}

/**
 * The queue dashboard (see, retry and remove jobs) at /api/admin/queues, for operators only. Off unless
 * QUEUE_DASHBOARD_USERNAME and QUEUE_DASHBOARD_PASSWORD are set.
 */
export async function mountQueueDashboard(app: NestFastifyApplication): Promise<void> {
  const credential = app.get(AppConfig).queueDashboard;
  if (!credential) return;
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: app
      .get(JobQueue)
      .allQueues()
      .map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
  });
  // Its own plugin scope, so the operator check guards the dashboard's routes and nothing else.
  await app.register(
    async (dashboard: FastifyInstance) => {
      dashboard.addHook('onRequest', operatorOnly(credential));
      await dashboard.register(serverAdapter.registerPlugin());
    },
    { prefix: QUEUE_DASHBOARD_PATH },
  );
}
