import { dropDatabase, ensureDatabase, runMigrations } from '@app/database';
import { createAccount } from './support/factories';
import { Stack, startStack } from './support/stack';
import { waitForDocument } from './support/wait-for';

/**
 * Queue job ids follow row ids (`document-<id>`), and finished jobs are kept for a while. A database restored from a
 * backup, or recreated against the same Redis and QUEUE_PREFIX, hands out row ids that finished jobs already name:
 * the new work must run anyway.
 */
describe('Job ids after the database is recreated against the same queues', () => {
  const base = process.env.TEST_DATABASE_URL!;
  const databases = ['before', 'after'].map((suffix) => {
    const url = new URL(base);
    url.pathname = `${url.pathname}_${suffix}`;
    return url.toString();
  });
  let stack: Stack | undefined;

  beforeAll(async () => {
    for (const url of databases) {
      await ensureDatabase(url);
      await runMigrations(url);
    }
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    for (const url of databases) await dropDatabase(url);
  });

  /** Three TXT documents in a fresh account of a fresh database: ids 1 to 3, every time. */
  async function uploadThree(databaseUrl: string): Promise<string[]> {
    stack = await startStack({ env: { DATABASE_URL: databaseUrl } });
    const account = await createAccount(stack);
    const knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Hours' }).expect(201)
    ).body.data.id;
    const ids: number[] = [];
    for (const day of ['Monday', 'Tuesday', 'Wednesday']) {
      const created = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .field('name', day)
        .field('type', 'txt')
        .attach('file', Buffer.from(`We are open on ${day}.`), `${day}.txt`)
        .expect(201);
      ids.push(created.body.data.id);
    }
    const statuses: string[] = [];
    for (const id of ids)
      statuses.push((await waitForDocument(stack, account, knowledgebase, id, 20_000)).status as string);
    await stack.close();
    stack = undefined;
    return statuses;
  }

  it('processes new documents whose ids finished jobs already name', async () => {
    expect(await uploadThree(databases[0])).toEqual(['active', 'active', 'active']);
    expect(await uploadThree(databases[1])).toEqual(['active', 'active', 'active']);
  }, 120_000);
});
