import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LossyProxy {
  origin: string;
  /** Every request forwarded, in order: method, path and body. */
  forwarded: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on 127.0.0.1 in front of the service that loses answers: a request `loseAnswer` picks is forwarded
 * and answered upstream, and then its connection is cut before the answer reaches the client, as a network fault
 * after the service acted would.
 */
export async function startLossyProxy(
  upstream: string,
  loseAnswer: (method: string, path: string) => boolean,
): Promise<LossyProxy> {
  const forwarded: LossyProxy['forwarded'] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const body = await read(request);
      const method = request.method ?? 'GET';
      const path = request.url ?? '/';
      forwarded.push({ method, path, body });
      const answer = await fetch(`${upstream}${path}`, {
        method,
        headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' },
        body: body || undefined,
      });
      const text = await answer.text();
      if (loseAnswer(method, path)) {
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function read(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}
