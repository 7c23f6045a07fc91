import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@app/config';
import { RedisWindowCounters } from './window-counters';

/**
 * A server that answers Redis's handshake (the ready check's INFO, anything else OK) until `hang` is called, and then
 * nothing: a Redis that stopped with its connections open.
 */
async function hangingRedis(): Promise<{ server: Server; port: number; hang: () => void }> {
  let hanging = false;
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      if (hanging) return;
      for (const command of chunk.toString('latin1').split(/\*\d+\r\n/).filter(Boolean)) {
        socket.write(/\binfo\b/i.test(command) ? '$0\r\n\r\n' : '+OK\r\n');
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, hang: () => (hanging = true) };
}

describe('RedisWindowCounters on a Redis that hangs', () => {
  it('fails each count within REDIS_COMMAND_TIMEOUT_MS of its call, however many wait together', async () => {
    const redis = await hangingRedis();
    const config = loadConfig({
      ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      REDIS_COMMAND_TIMEOUT_MS: '300',
    });
    const counters = new RedisWindowCounters(config, () => undefined);
    try {
      // Connected and ready (a count answered by the fake), then the server stops answering.
      for (let ready = false; !ready; ) {
        ready = await counters.clear('warm-up').then(
          () => true,
          () => sleep(20).then(() => false),
        );
      }
      redis.hang();
      const waits: Promise<number>[] = [];
      for (let index = 0; index < 3; index++) {
        const started = Date.now();
        waits.push(
          counters.hit(`rate:${index}`, 60_000).then(
            () => Promise.reject(new Error('answered')),
            (error: Error) => (expect(error.message).toBe('Command timed out'), Date.now() - started),
          ),
        );
        await sleep(100);
      }
      // Auto-pipelined commands leave one batch at a time: without its own bound, a count sent behind the first
      // batch would wait for that batch's timeout and then its own.
      for (const waited of await Promise.all(waits)) expect(waited).toBeLessThan(300 + 150);
    } finally {
      await counters.onApplicationShutdown();
      await new Promise((resolve) => redis.server.close(resolve));
    }
  });
});
