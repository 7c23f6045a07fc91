import type { FastifyInstance } from 'fastify';
import { Histogram } from 'prom-client';
import type { MetricsRegistry } from './metrics.registry';

/**
 * Times every request. Labels use the route pattern (`/api/user/knowledgebases/:id`), never the raw path, so
 * ids do not explode the number of series; unmatched paths are grouped as `unmatched`.
 */
export function recordHttpMetrics(app: FastifyInstance, registry: MetricsRegistry): void {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    // Fastify measures from the request's arrival; no timer of our own is kept per request.
    duration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });
}
