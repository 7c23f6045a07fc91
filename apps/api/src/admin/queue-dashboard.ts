import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
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
  return (request: Request, response: Response, next: NextFunction): void => {
    const [scheme, encoded] = (request.headers.authorization ?? '').split(' ');
    const given = scheme === 'Basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    if (given && timingSafeEqual(digest(given), expected)) return next();
    response.setHeader('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"');
    response.status(401).json({ message: 'Unauthenticated.' });
  };
}

/**
 * The queue dashboard (see, retry and remove jobs) at /api/admin/queues, for operators only. Off unless
 * QUEUE_DASHBOARD_USERNAME and QUEUE_DASHBOARD_PASSWORD are set.
 */
export function mountQueueDashboard(app: INestApplication): void {
  const credential = app.get(AppConfig).queueDashboard;
  if (!credential) return;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: app
      .get(JobQueue)
      .allQueues()
      .map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
  });
  app.use(QUEUE_DASHBOARD_PATH, operatorOnly(credential), serverAdapter.getRouter());
}
