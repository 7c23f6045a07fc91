import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter as NestExpressAdapter } from '@nestjs/platform-express';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppConfig } from '@app/config';
import { DomainError } from '@app/contracts';
import { JobQueue } from '@app/jobs';
import { MetricsServer, RequestLogging } from '@app/platform';
import { LoginThrottle } from '../auth/login-throttle.service';

export const QUEUE_DASHBOARD_PATH = '/api/admin/queues';

const digest = (text: string) => createHash('sha256').update(text).digest();

type Role = 'operator' | 'viewer';
interface Credential {
  username: string;
  password: string;
}

/**
 * HTTP Basic authentication against the configured credentials, compared as digests in constant time (neither
 * the length nor the content of a password leaks through timing). Every attempt from an address is counted before
 * it is checked, like the API's login, so guesses are throttled however many arrive at once; a good credential
 * clears the count.
 */
export function dashboardAccess(
  credentials: Partial<Record<Role, Credential>>,
  throttle: LoginThrottle,
  serve: Partial<Record<Role, RequestHandler>>,
) {
  const expected = Object.entries(credentials).map(
    ([role, credential]) => [role as Role, digest(`${credential.username}:${credential.password}`)] as const,
  );
  return async (request: Request, response: Response, next: NextFunction): Promise<void> => {
    const [scheme, encoded] = (request.headers.authorization ?? '').split(' ');
    const given = scheme === 'Basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const address = request.ip ?? 'unknown';
    try {
      if (given) await throttle.admit(DASHBOARD_LOGIN, address);
    } catch (error) {
      if (!(error instanceof DomainError)) return next(error);
      response.status(error.status).set(error.headers).json(error.body);
      return;
    }
    const role = given ? expected.find(([, hash]) => timingSafeEqual(digest(given), hash))?.[0] : undefined;
    if (!role) {
      response.setHeader('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"');
      response.status(401).json({ message: 'Unauthenticated.' });
      return;
    }
    await throttle.clear(DASHBOARD_LOGIN, address).catch(() => undefined);
    // The UI's page asks Google for its fonts; the operator's browser is told to ask nobody but this server.
    response.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; img-src 'self' data:",
    );
    // A viewer reads; the read-only board refuses changes too, but nothing that is not a read reaches it.
    if (role === 'viewer' && request.method !== 'GET' && request.method !== 'HEAD') {
      response.status(403).json({ message: 'The queue dashboard is read-only for this credential.' });
      return;
    }
    serve[role]!(request, response, next);
  };
}

/** The throttle's name for dashboard logins: one count per client address, apart from the API's logins. */
const DASHBOARD_LOGIN = 'queue-dashboard';

function board(app: INestApplication, readOnlyMode: boolean): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: app
      .get(JobQueue)
      .allQueues()
      .map((queue) => new BullMQAdapter(queue, { readOnlyMode })),
    serverAdapter,
  });
  return serverAdapter.getRouter();
}

/**
 * The queue dashboard at /api/admin/queues, for operations staff only: the operator credential (see, retry and
 * remove jobs) and, if configured, a viewer credential that can only look. Off unless the operator credential is
 * set. Served on the API's public port, or with QUEUE_DASHBOARD_ON=metrics on the metrics listener only, in an
 * Express app of its own (the same credentials, throttle, `trust proxy` and request lines).
 */
export function mountQueueDashboard(app: INestApplication): void {
  const config = app.get(AppConfig);
  const { queueDashboard, queueDashboardViewer } = config;
  if (!queueDashboard) return;
  const access = dashboardAccess(
    { operator: queueDashboard, ...(queueDashboardViewer ? { viewer: queueDashboardViewer } : {}) },
    app.get(LoginThrottle),
    // A read-only board exists only when someone can log in to it.
    { operator: board(app, false), ...(queueDashboardViewer ? { viewer: board(app, true) } : {}) },
  );
  if (config.queueDashboardOn === 'public') {
    app.use(QUEUE_DASHBOARD_PATH, access);
    return;
  }
  const dashboard = new NestExpressAdapter().getInstance<Express>();
  dashboard.disable('x-powered-by');
  dashboard.set('etag', false);
  dashboard.set('trust proxy', config.trustProxy);
  dashboard.use(app.get(RequestLogging).middleware());
  dashboard.use(QUEUE_DASHBOARD_PATH, access);
  app.get(MetricsServer).mount(QUEUE_DASHBOARD_PATH, dashboard);
}
