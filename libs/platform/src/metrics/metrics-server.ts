import { once } from 'node:events';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { MetricsRegistry } from './metrics.registry';
import { errorMessage } from '../error-message';

/** The one path the metrics listener answers, the same as on a worker's port. */
export const METRICS_PATH = '/api/metrics';

/**
 * The API's metrics on a listener of their own (`METRICS_PORT`): the API's port is the one a load balancer exposes,
 * and metrics (route patterns, pool sizes, queue health) are for the scraper inside the network. A bare Node server
 * rather than a second Nest app: no request line per scrape, no rate limit, no timing of the scrape itself. It opens
 * when the app is initialised and closes with it, after the drain, so a scrape during the drain still answers.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly server: Server;
  /** What else this listener serves, by path prefix (the queue dashboard with QUEUE_DASHBOARD_ON=metrics). */
  private readonly mounted: { prefix: string; handler: RequestListener }[] = [];

  constructor(
    private readonly registry: MetricsRegistry,
    private readonly config: AppConfig,
  ) {
    this.server = createServer((request, response) => void this.answer(request, response));
  }

  /** The port it listens on (METRICS_PORT, or the one the OS chose for 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Serves the paths under `prefix` with `handler` on this listener, apart from the public port: for what only the
   * network inside should reach. Its own access control is the handler's.
   */
  mount(prefix: string, handler: RequestListener): void {
    this.mounted.push({ prefix, handler });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.server.listen(this.config.metricsPort, '0.0.0.0');
    await Promise.race([
      once(this.server, 'listening'),
      once(this.server, 'error').then(([error]: Error[]) => {
        throw new Error(`METRICS_PORT ${this.config.metricsPort}: ${error.message}`);
      }),
    ]);
    new Logger('Metrics').log(`Metrics on http://localhost:${this.port}${METRICS_PATH}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, 'close');
    this.server.close();
    // A scraper's idle keep-alive connection must not hold the process open.
    this.server.closeAllConnections();
    await closed;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
      response.end(body);
    };
    const path = request.url?.split('?')[0] ?? '';
    const mounted = this.mounted.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
    if (mounted) return void mounted.handler(request, response);
    if (path !== METRICS_PATH) return text(404, 'Not Found\n');
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return text(405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    let body: string;
    try {
      body = await this.registry.metrics();
    } catch (error) {
      new Logger('Metrics').error(`Collecting the metrics failed: ${errorMessage(error)}`);
      return text(500, 'Collecting the metrics failed\n');
    }
    response.writeHead(200, {
      'Content-Type': this.registry.contentType,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : body);
  }
}
