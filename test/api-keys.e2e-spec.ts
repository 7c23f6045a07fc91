import { bearer, createAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';

describe('API keys', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  it('creates a key whose token is shown once and works as a bearer token', async () => {
    const account = await createAccount(stack);
    const created = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'CRM' }).expect(201);
    expect(created.body).toEqual({
      message: 'API key created successfully.',
      api_key: {
        id: expect.any(Number),
        name: 'CRM',
        token: expect.stringMatching(/^vak_[0-9A-Za-z]{49}$/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    const token = created.body.api_key.token;
    const me = await stack.http.get('/api/user/me').set(bearer(token)).expect(200);
    expect(me.body.data.id).toBe(account.id);
    // The id the create answers is the one the list shows and the delete takes.
    const list = await stack.http.get('/api/user/api-keys').set(account.auth).expect(200);
    expect(list.body.api_keys.map((key: { id: number }) => key.id)).toEqual([created.body.api_key.id]);

    const [row] = await stack.dataSource.query('SELECT token_hash FROM api_keys WHERE user_id = $1', [account.id]);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_hash).not.toContain(token.slice(4));
  });

  it('lets a key create further keys', async () => {
    const account = await createAccount(stack);
    const first = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'first' }).expect(201);
    await stack.http
      .post('/api/user/api-keys')
      .set(bearer(first.body.api_key.token))
      .send({ name: 'second' })
      .expect(201);
    const list = await stack.http.get('/api/user/api-keys').set(account.auth).expect(200);
    expect(list.body.api_keys.map((key: { name: string }) => key.name)).toEqual(['second', 'first']);
  });

  it('requires a name, in the validation shape', async () => {
    const account = await createAccount(stack);
    const missing = await stack.http.post('/api/user/api-keys').set(account.auth).send({}).expect(422);
    expect(missing.body).toEqual({
      message: 'The name field is required.',
      errors: { name: ['The name field is required.'] },
    });
    const tooLong = await stack.http
      .post('/api/user/api-keys')
      .set(account.auth)
      .send({ name: 'x'.repeat(256) })
      .expect(422);
    expect(tooLong.body.errors).toEqual({ name: ['The name field must not be greater than 255 characters.'] });
    const wrongType = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 42 }).expect(422);
    expect(wrongType.body.errors).toEqual({ name: ['The name field must be a string.'] });
  });

  it('lists keys without their tokens, newest first, and only the account’s own', async () => {
    const account = await createAccount(stack);
    const other = await createAccount(stack);
    await stack.http.post('/api/user/api-keys').set(other.auth).send({ name: 'not mine' }).expect(201);
    await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'a' }).expect(201);
    await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'b' }).expect(201);
    const list = await stack.http.get('/api/user/api-keys').set(account.auth).expect(200);
    expect(list.body).toEqual({
      api_keys: [
        { id: expect.any(Number), name: 'b', last_used_at: null, created_at: expect.any(String) },
        { id: expect.any(Number), name: 'a', last_used_at: null, created_at: expect.any(String) },
      ],
    });
    expect(JSON.stringify(list.body)).not.toContain('vak_');
  });

  it('records last use at most once a minute', async () => {
    const account = await createAccount(stack);
    const created = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'used' }).expect(201);
    const key = bearer(created.body.api_key.token);
    await stack.http.get('/api/user/me').set(key).expect(200);
    const first = (await stack.http.get('/api/user/api-keys').set(account.auth)).body.api_keys[0].last_used_at;
    expect(first).toEqual(expect.any(String));

    await stack.http.get('/api/user/me').set(key).expect(200);
    const second = (await stack.http.get('/api/user/api-keys').set(account.auth)).body.api_keys[0].last_used_at;
    expect(second).toBe(first);

    await stack.dataSource.query(`UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE user_id = $1`, [
      account.id,
    ]);
    await stack.http.get('/api/user/me').set(key).expect(200);
    const third = (await stack.http.get('/api/user/api-keys').set(account.auth)).body.api_keys[0].last_used_at;
    expect(Date.parse(third)).toBeGreaterThan(Date.now() - 10_000);
  });

  it('deletes a key, which is refused on the very next request', async () => {
    const account = await createAccount(stack);
    const created = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'gone' }).expect(201);
    const key = bearer(created.body.api_key.token);
    await stack.http.get('/api/user/me').set(key).expect(200);
    const [{ id }] = (await stack.http.get('/api/user/api-keys').set(account.auth)).body.api_keys;

    const deleted = await stack.http.delete(`/api/user/api-keys/${id}`).set(account.auth).expect(200);
    expect(deleted.body).toEqual({ message: 'API key deleted successfully.' });
    const refused = await stack.http.get('/api/user/me').set(key).expect(401);
    expect(refused.body).toEqual({ message: 'Unauthenticated.' });

    const again = await stack.http.delete(`/api/user/api-keys/${id}`).set(account.auth).expect(404);
    expect(again.body).toEqual({ message: 'API key not found.' });
  });

  it('treats another account’s key exactly like a missing one', async () => {
    const owner = await createAccount(stack);
    const intruder = await createAccount(stack);
    const created = await stack.http.post('/api/user/api-keys').set(owner.auth).send({ name: 'private' }).expect(201);
    const [{ id }] = (await stack.http.get('/api/user/api-keys').set(owner.auth)).body.api_keys;

    const foreign = await stack.http.delete(`/api/user/api-keys/${id}`).set(intruder.auth);
    const missing = await stack.http.delete('/api/user/api-keys/2147483000').set(intruder.auth);
    const malformed = await stack.http.delete('/api/user/api-keys/not-an-id').set(intruder.auth);
    for (const response of [foreign, missing, malformed]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'API key not found.' });
    }
    await stack.http.get('/api/user/me').set(bearer(created.body.api_key.token)).expect(200);
  });
});
