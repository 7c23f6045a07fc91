import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { PassageSearch } from '@app/database';
import { createWorkerApp } from '../apps/worker/src/worker.app';
import { createAccount, type TestAccount } from './support/factories';
import { type Pgbouncer, pgbouncerBinary, startPgbouncer } from './support/pgbouncer';
import { passagesRead } from './support/search-plans';
import { type Stack, startStack, testConfig } from './support/stack';
import { waitForDocument } from './support/wait-for';

const PARAGRAPHS = [
  'Note on the weather. A parcel waits at the front desk.',
  'Note on the weather. The courier is late today.',
  'Our office is open Monday to Friday from nine to five.',
  'Refunds are processed within fourteen days of receiving the returned item.',
];

/**
 * Operators who outgrow one machine put PgBouncer in transaction mode between the service and PostgreSQL: a
 * connection's settings and prepared statements do not follow the client there. The API and the worker (which
 * ingests the documents) run through a real PgBouncer with one server connection for all their clients, so anything
 * one request or job leaves on the connection is met by the next.
 */
const binary = pgbouncerBinary();
(binary ? describe : describe.skip)('Search behind PgBouncer in transaction mode', () => {
  let bouncer: Pgbouncer;
  let stack: Stack;
  let worker: INestApplication;
  let account: TestAccount;
  let knowledgebaseId: number;

  beforeAll(async () => {
    bouncer = await startPgbouncer(binary!, process.env.TEST_DATABASE_URL!, 1);
    stack = await startStack({ env: { DATABASE_URL: bouncer.url }, worker: false });
    worker = await createWorkerApp(testConfig({ DATABASE_URL: bouncer.url }));
    await worker.listen(0, '127.0.0.1');
    account = await createAccount(stack);
    const languages = await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200);
    const english = languages.body.find((language: { name: string }) => language.name === 'English').id;
    const created = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .send({ name: 'Desk', language_id: english })
      .expect(201);
    knowledgebaseId = created.body.data.id;
    for (const [index, paragraph] of PARAGRAPHS.entries()) {
      const document = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .field('name', `Answer ${index + 1}`)
        .field('type', 'txt')
        .attach('file', Buffer.from(paragraph, 'utf8'), `answer-${index + 1}.txt`)
        .expect(201);
      const done = await waitForDocument(stack, account, knowledgebaseId, document.body.data.id, 60_000);
      expect(done.status).toBe('active');
    }
    // Another account's knowledgebase holding the same words thousands of times, as the worker writes passages.
    const other = await createAccount(stack);
    const [crowded] = await stack.dataSource.query(
      `INSERT INTO knowledgebases (user_id, name, language_id) VALUES ($1, 'Depot', $2) RETURNING id`,
      [other.id, english],
    );
    const [document] = await stack.dataSource.query(
      `INSERT INTO documents (user_id, knowledgebase_id, name, type, status)
       VALUES ($1, $2, 'Depot', 'txt', 'active') RETURNING id`,
      [other.id, crowded.id],
    );
    await stack.dataSource.query(
      `INSERT INTO passages (user_id, knowledgebase_id, document_id, position, content)
       SELECT $1, $2, $3, n, 'Parcel number ' || n || ' waits for the courier in all weather.'
         FROM generate_series(1, 3000) AS n`,
      [other.id, crowded.id, document.id],
    );
    await stack.dataSource.query('VACUUM ANALYZE passages');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([stack?.close(), worker?.close()]);
    await bouncer?.stop();
  });

  const search = (query: string) =>
    stack.http.get(`/api/user/knowledgebases/${knowledgebaseId}/search`).query({ query, limit: 5 }).set(account.auth);

  it('answers every search right, many at once, on one shared server connection', async () => {
    const expected: Record<string, string> = {
      parcel: 'Answer 1',
      courier: 'Answer 2',
      'when is the office open on friday': 'Answer 3',
      'how long do refunds take': 'Answer 4',
      'weather courier': 'Answer 2',
    };
    // Well past the five runs after which PostgreSQL may keep one plan for a statement it has prepared.
    for (let round = 0; round < 4; round += 1) {
      const answers = await Promise.all(Object.keys(expected).map((query) => search(query)));
      for (const [index, query] of Object.keys(expected).entries()) {
        const answer = answers[index];
        expect({ query, status: answer.status, body: answer.status === 200 ? undefined : answer.body }).toEqual({
          query,
          status: 200,
          body: undefined,
        });
        expect({ query, first: answer.body.data[0]?.document_name }).toEqual({ query, first: expected[query] });
      }
    }
  });

  it('leaves nothing on the server connection, and the statement is planned for the knowledgebase at hand', async () => {
    // Through the pooler, on the one server connection every search above ran on.
    const client = new Client({ connectionString: bouncer.url });
    await client.connect();
    try {
      const [state] = (
        await client.query(
          `SELECT current_setting('plan_cache_mode') AS plan_cache_mode,
                  (SELECT count(*)::int FROM pg_prepared_statements) AS prepared`,
        )
      ).rows;
      expect(state).toEqual({ plan_cache_mode: 'auto', prepared: 0 });
      // The statement as the service sends it (unnamed, its values bound): the plan is made for this knowledgebase,
      // so no scan reads the other account's passages of the word, nor walks past them.
      const [sql, values] = new PassageSearch(stack.dataSource).statement(
        account.id,
        knowledgebaseId,
        'weather courier',
        5,
      );
      for (let run = 0; run < 6; run += 1) {
        const plan = (await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, values)).rows.map(
          (row: { 'QUERY PLAN': string }) => row['QUERY PLAN'],
        );
        const scans = passagesRead(plan);
        expect(scans.length).toBeGreaterThan(0);
        for (const scan of scans) expect(scan.rows + scan.removed).toBeLessThanOrEqual(PARAGRAPHS.length);
      }
    } finally {
      await client.end();
    }
  });
});
