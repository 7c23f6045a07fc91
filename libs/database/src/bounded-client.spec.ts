import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { Pool } from 'pg';
import { BoundedClient, withStatementBound } from './bounded-client';

/**
 * A server that speaks just enough of PostgreSQL's protocol to let a client in (trust authentication, then ready for a
 * query) and then answers nothing: a server that hangs, as one stopped with SIGSTOP does.
 */
async function silentServer(): Promise<{ server: Server; port: number; closed: () => number }> {
  let closed = 0;
  const server = createServer((socket) => {
    socket.once('data', () => {
      const authenticationOk = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
      const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
      socket.write(Buffer.concat([authenticationOk, readyForQuery]));
    });
    socket.on('close', () => closed++);
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  // Closes once the pools under test have closed their connections (each test ends its pool first).
  return { server, port: (server.address() as { port: number }).port, closed: () => closed };
}

describe('BoundedClient', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeEach(async () => (silent = await silentServer()));
  afterEach(() => new Promise((resolve) => silent.server.close(resolve)));

  const pool = (Client?: typeof BoundedClient) =>
    new Pool({ host: '127.0.0.1', port: silent.port, user: 'x', database: 'x', query_timeout: 100, Client });

  it('leaves the pool when its statement timed out, as a connection released without the error (TypeORM’s way)', async () => {
    const bounded = pool(BoundedClient);
    try {
      const client = await bounded.connect();
      await expect(client.query('SELECT 1')).rejects.toThrow('Query read timeout');
      client.release();
      // Closed, not kept waiting for an answer that may never come: the next statement gets a fresh connection.
      expect(bounded.totalCount).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(silent.closed()).toBe(1);
    } finally {
      await bounded.end();
    }
  });

  it('(pg alone keeps such a connection, and the next statement on it waits behind the first)', async () => {
    const plain = pool();
    try {
      const client = await plain.connect();
      await expect(client.query('SELECT 1')).rejects.toThrow('Query read timeout');
      client.release();
      expect(plain.totalCount).toBe(1);
    } finally {
      await plain.end();
    }
  });

  it('takes a longer bound for the statements of work run under withStatementBound', async () => {
    const bounded = pool(BoundedClient);
    try {
      const started = Date.now();
      await expect(withStatementBound(600, () => bounded.query('SELECT 1'))).rejects.toThrow('Query read timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
      const quick = Date.now();
      await expect(bounded.query('SELECT 1')).rejects.toThrow('Query read timeout');
      expect(Date.now() - quick).toBeLessThan(550);
    } finally {
      await bounded.end();
    }
  });
});
