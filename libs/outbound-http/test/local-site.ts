import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface LocalSite {
  port: number;
  /** http://127.0.0.1:PORT (https with `tls`) */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 with an ephemeral port that logs every request it receives; unknown paths go to the
 * `*` route if there is one, else 404. With `tls`, HTTPS with that key and certificate. */
export async function startLocalSite(
  routes: Record<string, RouteHandler> = {},
  options: { tls?: { key: string; cert: string } } = {},
): Promise<LocalSite> {
  const requests: RecordedRequest[] = [];
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      requests.push({
        method: request.method ?? '',
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        receivedAt: Date.now(),
      });
      const handler = routes[path] ?? routes[path.split('?')[0]] ?? routes['*'];
      if (handler) return handler(request, response);
      response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    });
  };
  const server = options.tls ? createTlsServer(options.tls, handle) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendHtml(html: string, headers: Record<string, string> = {}): RouteHandler {
  return (_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(html);
}

export function sendRedirect(location: string, status = 302, headers: Record<string, string> = {}): RouteHandler {
  return (_request, response) => response.writeHead(status, { location, ...headers }).end();
}

/** A minimal HTML page with a title, as sites serve them. */
export function sendPage(title: string, body: string): RouteHandler {
  return sendHtml(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`);
}
