import type { NextFunction, Request, Response } from 'express';
import { Histogram } from 'prom-client';
import type { MetricsRegistry } from './metrics.registry';

/**
 * Times every request (an Express middleware, placed before the routes). Labels use the route pattern
 * (`/api/user/knowledgebases/:id`), never the raw path, so ids do not explode the number of series; unmatched
 * paths are grouped as `unmatched`.
 */
export function httpMetrics(registry: MetricsRegistry) {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    response.once('finish', () => {
      // Set by Express's router on the route that answered; the app's routes are mounted at its root.
      const route = request.route?.path ? `${request.baseUrl}${request.route.path}` : 'unmatched';
      duration.observe(
        { method: request.method, route, status: String(response.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
