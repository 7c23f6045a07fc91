import { In, type ObjectLiteral, type Repository } from 'typeorm';
import { ApiKey, Assistant, Document, Knowledgebase, PhoneNumber, Tool, TenantRepository } from '@app/database';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { waitForDocument } from './support/wait-for';

/**
 * The account repositories answer the lists and checks read on every request without TypeORM's query builder. What
 * they answer must be what TypeORM's own `find` and `exists` answer: the same entities, column for column, and never
 * another account's rows.
 */
describe('TenantRepository', () => {
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let knowledgebase: number;

  beforeAll(async () => {
    stack = await startStack();
    owner = await createAccount(stack);
    other = await createAccount(stack);
    for (const account of [owner, other]) {
      const post = (path: string, body: object) =>
        stack.http.post(`/api/user/${path}`).set(account.auth).send(body).expect(201);
      const [language] = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
      for (const index of [1, 2, 3]) {
        const created = (await post('knowledgebases', { name: `FAQ ${index}`, description: 'Hours' })).body.data.id;
        if (account === owner && index === 1) knowledgebase = created;
        await post('api-keys', { name: `Key ${index}` });
        await post('tools', {
          name: `lookup_${index}`,
          description: 'Finds an order',
          endpoint: 'https://orders.example.com/{id}',
          method: 'GET',
        });
        await post('assistant', { name: `Agent ${index}`, type: 'inbound', language_id: language.id });
      }
      await post('phone-numbers/sip-trunks', sipTrunkRequest());
      const documentsKnowledgebase = account === owner ? knowledgebase : await firstKnowledgebase(account);
      for (const day of ['Monday', 'Tuesday']) {
        const uploaded = await stack.http
          .post(`/api/user/knowledgebases/${documentsKnowledgebase}/documents`)
          .set(account.auth)
          .field('name', day)
          .field('type', 'txt')
          .attach('file', Buffer.from(`Open on ${day}.`), `${day}.txt`)
          .expect(201);
        // The worker moves each document on once: compared while it does, two reads could see different rows.
        await waitForDocument(stack, account, documentsKnowledgebase, uploaded.body.data.id);
      }
    }
  }, 60_000);
  afterAll(() => stack.close());

  async function firstKnowledgebase(account: TestAccount): Promise<number> {
    return (await stack.http.get('/api/user/knowledgebases').set(account.auth)).body.data[0].id;
  }

  const entities = [ApiKey, Assistant, Document, Knowledgebase, PhoneNumber, Tool] as const;

  it.each(entities.map((entity) => [entity.name, entity]))(
    'finds %s rows as TypeORM does, the owner’s only',
    async (_name, entity) => {
      const repository = stack.dataSource.getRepository(entity) as unknown as Repository<ObjectLiteral>;
      const tenant = new TenantRepository(stack.dataSource.getRepository(entity));
      const typeorm = (where: object, order?: object) =>
        repository.find({ where: { ...where, userId: owner.id }, ...(order ? { order } : {}) });

      const newestFirst = await tenant.find(owner.id, { order: { id: 'DESC' } });
      expect(newestFirst.length).toBeGreaterThan(0);
      expect(newestFirst).toStrictEqual(await typeorm({}, { id: 'DESC' }));
      expect(await tenant.findAllNewestFirst(owner.id)).toStrictEqual(newestFirst);

      const ids = newestFirst.map((row) => row.id);
      const some = [ids[0], ids[ids.length - 1]];
      expect(await tenant.find(owner.id, { where: { id: In(some) } as never, order: { id: 'ASC' } })).toStrictEqual(
        await typeorm({ id: In(some) }, { id: 'ASC' }),
      );
      expect(await tenant.find(owner.id, { where: { id: ids[0] } as never })).toStrictEqual(
        await typeorm({ id: ids[0] }),
      );
      expect(await tenant.exists(owner.id, { id: ids[0] } as never)).toBe(true);

      // Another account's rows, by id or among ids, are missing rows.
      const theirs = (await repository.find({ where: { userId: other.id } })).map((row) => row.id as number);
      expect(await tenant.find(owner.id, { where: { id: In(theirs) } as never })).toEqual([]);
      expect(await tenant.exists(owner.id, { id: theirs[0] } as never)).toBe(false);
    },
  );

  it('filters documents by their knowledgebase as TypeORM does', async () => {
    const documents = new TenantRepository(stack.dataSource.getRepository(Document));
    const listed = await documents.find(owner.id, { where: { knowledgebaseId: knowledgebase }, order: { id: 'DESC' } });
    expect(listed.map((document) => document.name)).toEqual(['Tuesday', 'Monday']);
    expect(listed).toStrictEqual(
      await stack.dataSource
        .getRepository(Document)
        .find({ where: { userId: owner.id, knowledgebaseId: knowledgebase }, order: { id: 'DESC' } }),
    );
    const knowledgebases = new TenantRepository(stack.dataSource.getRepository(Knowledgebase));
    expect(await knowledgebases.exists(owner.id, { id: knowledgebase })).toBe(true);
    expect(await knowledgebases.exists(other.id, { id: knowledgebase })).toBe(false);
  });
});
