import { readFileSync } from 'node:fs';
import type { Cluster } from 'ioredis';
import { QueueBackend } from '@app/jobs';
import { createRedisClient } from '@app/platform';
import { createAccount } from '../support/factories';
import type { RecordedCommand } from '../support/redis-cluster';
import { type Stack, startStack } from '../support/stack';
import { REDIS_CLUSTER_NODES } from '../support/test-environment';
import { waitForDocument } from '../support/wait-for';

const onCluster = REDIS_CLUSTER_NODES() ? describe : describe.skip;

/**
 * Redis Cluster runs a script or a multi-key command only when all its keys hash to one slot. The global setup
 * records every multi-key command the masters received during the run (`npm run test:cluster` runs this file last,
 * after the documents, campaigns, dialer and calls files); this file adds its own logins and document, then checks
 * each recorded command, and where each queue's keys ended up.
 */
onCluster('Keys on a Redis Cluster', () => {
  let stack: Stack;
  let redis: Cluster;

  beforeAll(async () => {
    stack = await startStack();
    redis = createRedisClient(stack.config) as Cluster;
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.close();
  });

  /** The slot of every key, asked of one master in a single round trip. */
  async function slotsOf(keys: string[]): Promise<Map<string, number>> {
    const node = redis.nodes('master')[0];
    const pipeline = node.pipeline();
    for (const key of keys) pipeline.call('CLUSTER', 'KEYSLOT', key);
    const answers = (await pipeline.exec()) ?? [];
    return new Map(keys.map((key, index) => [key, Number(answers[index][1])]));
  }

  it('runs every script and multi-key command of the run within one slot', async () => {
    const account = await createAccount(stack);
    // The login throttle's script, then its clear.
    await stack.http.post('/api/auth/login').send({ email: account.email, password: 'not the password' }).expect(422);
    await stack.http.post('/api/auth/login').send({ email: account.email, password: account.password }).expect(200);
    const knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Slots' }).expect(201)
    ).body.data.id;
    const document = (
      await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .field('name', 'Hours')
        .field('type', 'txt')
        .attach('file', Buffer.from('We are open Monday to Friday.'), 'hours.txt')
        .expect(201)
    ).body.data.id;
    expect((await waitForDocument(stack, account, knowledgebase, document)).status).toBe('active');

    const recorded: RecordedCommand[] = readFileSync(process.env.TEST_REDIS_COMMAND_LOG!, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const slots = await slotsOf([...new Set(recorded.flatMap((command) => command.keys))]);
    const crossSlot = recorded.filter((command) => new Set(command.keys.map((key) => slots.get(key))).size > 1);
    expect(crossSlot).toEqual([]);

    const scripts = new Set(recorded.filter((command) => command.script).map((command) => command.script));
    const queuesSeen = new Set(recorded.flatMap((command) => command.keys.map((key) => /^\{[^}]*\}/.exec(key)?.[0])));
    console.log(
      `${recorded.length} multi-key commands (${scripts.size} distinct scripts) over ${slots.size} keys, each within one slot; ` +
        `queues: ${[...queuesSeen].filter(Boolean).join(', ')}`,
    );
    // Not a vacuous pass: the documents queue's job scripts were among them.
    expect(queuesSeen).toContain(`{${stack.config.queuePrefix}:documents}`);
    expect(scripts.size).toBeGreaterThan(5);
  });

  it("keeps each queue's keys in one slot, the queues spread over the masters", async () => {
    const prefix = stack.config.queuePrefix;
    const keysByMaster = await Promise.all(
      redis.nodes('master').map(async (node) => {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, batch] = await node.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
          keys.push(...batch);
          cursor = next;
        } while (cursor !== '0');
        return { master: `${node.options.host}:${node.options.port}`, keys };
      }),
    );
    const queueKeys = keysByMaster.flatMap(({ master, keys }) =>
      keys.filter((key) => key.startsWith(`{${prefix}:`)).map((key) => ({ master, key })),
    );
    const slots = await slotsOf(queueKeys.map(({ key }) => key));
    const placement = new Map<string, { slots: Set<number>; masters: Set<string> }>();
    for (const { master, key } of queueKeys) {
      const tag = /^\{([^}]*)\}/.exec(key)![1];
      const entry = placement.get(tag) ?? { slots: new Set(), masters: new Set() };
      entry.slots.add(slots.get(key)!);
      entry.masters.add(master);
      placement.set(tag, entry);
    }
    const backend = new QueueBackend(stack.config);
    expect(backend.redisPrefix('documents')).toBe(`{${prefix}:documents}`);
    expect([...placement.keys()]).toContain(`${prefix}:documents`);
    for (const [tag, { slots: used, masters }] of placement) {
      expect({ tag, slots: used.size, masters: masters.size }).toEqual({ tag, slots: 1, masters: 1 });
    }
    console.log(
      [...placement]
        .map(
          ([tag, { slots: used, masters }]) =>
            `${tag.slice(prefix.length + 1)}: slot ${[...used][0]} on ${[...masters][0]}`,
        )
        .join('; '),
    );
    // Nothing of the queues is outside a hash tag: every BullMQ key carries its queue's tag.
    const untagged = keysByMaster.flatMap(({ keys }) =>
      keys.filter((key) => !key.startsWith(`{${prefix}:`) && !key.startsWith(`${prefix}:`)),
    );
    expect(untagged).toEqual([]);
  });
});
