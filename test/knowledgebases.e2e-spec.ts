import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { waitForDocument } from './support/wait-for';

describe('Knowledgebases', () => {
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await startStack();
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  const createKnowledgebase = async (name = 'Support') =>
    (await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name }).expect(201)).body.data;

  it('creates, reads, updates, lists and deletes', async () => {
    const created = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .send({ name: 'Product FAQ', description: 'Answers for callers', status: 'active', id: 999 })
      .expect(201);
    expect(created.body).toEqual({
      message: 'Knowledgebase created successfully.',
      data: {
        id: expect.any(Number),
        name: 'Product FAQ',
        description: 'Answers for callers',
        language_id: null,
        status: 'empty',
        status_label: 'Empty',
        documents_count: 0,
        assistants_count: 0,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      },
    });
    const id = created.body.data.id;
    expect(id).not.toBe(999);

    const read = await stack.http.get(`/api/user/knowledgebases/${id}`).set(account.auth).expect(200);
    expect(read.body).toEqual({ data: created.body.data });

    const updated = await stack.http
      .put(`/api/user/knowledgebases/${id}`)
      .set(account.auth)
      .send({ description: null })
      .expect(200);
    expect(updated.body.data).toMatchObject({ name: 'Product FAQ', description: null });

    const nullName = await stack.http.put(`/api/user/knowledgebases/${id}`).set(account.auth).send({ name: null });
    expect([nullName.status, nullName.body.errors]).toEqual([422, { name: ['The name field is required.'] }]);

    const list = await stack.http.get('/api/user/knowledgebases').set(account.auth).expect(200);
    expect(list.body.data.map((item: { id: number }) => item.id)).toContain(id);

    await stack.http.delete(`/api/user/knowledgebases/${id}`).set(account.auth).expect(200, {
      message: 'Knowledgebase deleted successfully.',
    });
    const gone = await stack.http.get(`/api/user/knowledgebases/${id}`).set(account.auth).expect(404);
    expect(gone.body).toEqual({ error: 'Knowledgebase not found.' });
  });

  it('answers {data: []} when there are none', async () => {
    const fresh = await createAccount(stack);
    const response = await stack.http.get('/api/user/knowledgebases').set(fresh.auth).expect(200);
    expect(response.body).toEqual({ data: [] });
  });

  it('validates name and description', async () => {
    const response = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .send({ description: 'x'.repeat(256) })
      .expect(422);
    expect(response.body).toEqual({
      message: 'The name field is required. (and 1 more error)',
      errors: {
        name: ['The name field is required.'],
        description: ['The description field must not be greater than 255 characters.'],
      },
    });
  });

  it('keeps every knowledgebase private to its account', async () => {
    const knowledgebase = await createKnowledgebase('Private');
    const intruder = await createAccount(stack);
    const notFound = { error: 'Knowledgebase not found.' };
    const base = `/api/user/knowledgebases/${knowledgebase.id}`;
    for (const response of [
      await stack.http.get(base).set(intruder.auth),
      await stack.http.put(base).set(intruder.auth).send({ name: 'mine now' }),
      await stack.http.delete(base).set(intruder.auth),
      await stack.http.get(`${base}/documents`).set(intruder.auth),
      await stack.http
        .post(`${base}/documents`)
        .set(intruder.auth)
        .send({ name: 'x', type: 'website', url: 'http://127.0.0.1/' }),
      await stack.http.get(`${base}/search?query=anything`).set(intruder.auth),
      await stack.http.get('/api/user/knowledgebases/2147483000').set(intruder.auth),
      await stack.http.get('/api/user/knowledgebases/abc').set(intruder.auth),
    ]) {
      expect([response.status, response.body]).toEqual([404, notFound]);
    }
    const list = await stack.http.get('/api/user/knowledgebases').set(intruder.auth).expect(200);
    expect(list.body).toEqual({ data: [] });
    await stack.http.get(base).set(account.auth).expect(200);
  });

  it('processes a TXT upload to active, and finds its passages by search', async () => {
    const knowledgebase = await createKnowledgebase('Opening hours');
    const text =
      'Our office is open Monday to Friday from nine to five.\n\nRefunds are processed within fourteen days.';
    const created = await stack.http
      .post(`/api/user/knowledgebases/${knowledgebase.id}/documents`)
      .set(account.auth)
      .field('name', 'Hours')
      .field('type', 'txt')
      .attach('file', Buffer.from(text, 'utf8'), 'hours.txt')
      .expect(201);
    expect(created.body).toEqual({
      message: 'Document created successfully.',
      data: {
        id: expect.any(Number),
        name: 'Hours',
        description: null,
        type: 'txt',
        type_label: 'Text',
        status: 'processing',
        status_label: 'Processing',
        created_at: expect.any(String),
      },
    });

    const document = await waitForDocument(stack, account, knowledgebase.id, created.body.data.id);
    expect(document).toMatchObject({
      status: 'active',
      status_label: 'Active',
      error_message: null,
      content_length: text.length,
    });
    expect(document.pages).toBeUndefined();

    const kb = await stack.http.get(`/api/user/knowledgebases/${knowledgebase.id}`).set(account.auth).expect(200);
    expect(kb.body.data).toMatchObject({ status: 'active', status_label: 'Active', documents_count: 1 });

    const search = await stack.http
      .get(`/api/user/knowledgebases/${knowledgebase.id}/search?query=refunds processed`)
      .set(account.auth)
      .expect(200);
    expect(search.body.data).toEqual([
      {
        document_id: created.body.data.id,
        document_name: 'Hours',
        content: expect.stringContaining('Refunds are processed'),
        highlight: expect.stringContaining('**Refunds** are **processed**'),
        score: expect.any(Number),
      },
    ]);
    expect(search.body.data[0].score).toBeGreaterThan(0);

    const [file] = await stack.dataSource.query(
      'SELECT count(*)::int AS files FROM document_files WHERE document_id = $1',
      [created.body.data.id],
    );
    expect(file.files).toBe(0);
  });

  it('validates search parameters and finds nothing in an empty knowledgebase', async () => {
    const knowledgebase = await createKnowledgebase('Empty');
    const base = `/api/user/knowledgebases/${knowledgebase.id}/search`;
    const missing = await stack.http.get(base).set(account.auth).expect(422);
    expect(missing.body).toEqual({
      message: 'The query field is required.',
      errors: { query: ['The query field is required.'] },
    });
    const limit = await stack.http.get(`${base}?query=x&limit=51`).set(account.auth).expect(422);
    expect(limit.body.errors).toEqual({ limit: ['The limit field must be between 1 and 50.'] });
    const empty = await stack.http.get(`${base}?query="opening hours" OR -closed`).set(account.auth).expect(200);
    expect(empty.body).toEqual({ data: [] });
  });
});
