import { generateToken } from '@app/platform';
import { bearer, createAccount } from './support/factories';
import { type Stack, startStack, recordQueries } from './support/stack';

describe('Authentication', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { LOGIN_ATTEMPTS_PER_MINUTE: '3' } });
  });
  afterAll(() => stack.close());

  describe('register', () => {
    it('creates an account and returns a session token that works', async () => {
      const response = await stack.http
        .post('/api/auth/register')
        .send({ name: 'Ada Lovelace', email: 'Ada.Register@Example.com', password: 'password-123' })
        .expect(201);
      expect(response.body).toEqual({
        message: expect.any(String),
        user: { id: expect.any(Number), name: 'Ada Lovelace', email: 'ada.register@example.com' },
        token: expect.stringMatching(/^vas_[0-9A-Za-z]{49}$/),
      });
      const me = await stack.http.get('/api/user/me').set(bearer(response.body.token)).expect(200);
      expect(me.body).toEqual({ data: response.body.user });
    });

    it('refuses an email already taken, whatever its case', async () => {
      const account = await createAccount(stack);
      const response = await stack.http
        .post('/api/auth/register')
        .send({ name: 'Again', email: account.email.toUpperCase(), password: 'password-123' })
        .expect(422);
      expect(response.body).toEqual({
        message: 'The email has already been taken.',
        errors: { email: ['The email has already been taken.'] },
      });
    });

    it('validates every field in Laravel shape', async () => {
      const response = await stack.http.post('/api/auth/register').send({ email: 'not-an-email', password: 'short' });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        message: 'The name field is required. (and 2 more errors)',
        errors: {
          name: ['The name field is required.'],
          email: ['The email field must be a valid email address.'],
          password: ['The password field must be at least 8 characters.'],
        },
      });
    });

    it('stores the password hashed with argon2id', async () => {
      const account = await createAccount(stack);
      const [row] = await stack.dataSource.query('SELECT password_hash FROM users WHERE id = $1', [account.id]);
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(row.password_hash).not.toContain(account.password);
    });
  });

  describe('login', () => {
    it('returns a new session token with its name', async () => {
      const account = await createAccount(stack);
      const response = await stack.http
        .post('/api/auth/login')
        .send({ email: account.email, password: account.password, token_name: 'cli' })
        .expect(200);
      expect(response.body).toEqual({
        message: expect.any(String),
        user: { id: account.id, name: 'Test User', email: account.email },
        token: expect.stringMatching(/^vas_/),
        token_name: 'cli',
      });
      expect(response.body.token).not.toBe(account.token);
      await stack.http.get('/api/user/me').set(bearer(response.body.token)).expect(200);
    });

    it('answers wrong credentials with 422 on email, for a wrong password and an unknown email alike', async () => {
      const account = await createAccount(stack);
      const expected = {
        message: 'These credentials do not match our records.',
        errors: { email: ['These credentials do not match our records.'] },
      };
      const wrongPassword = await stack.http
        .post('/api/auth/login')
        .send({ email: account.email, password: 'wrong password' });
      expect([wrongPassword.status, wrongPassword.body]).toEqual([422, expected]);
      const unknown = await stack.http
        .post('/api/auth/login')
        .send({ email: 'nobody@example.com', password: 'wrong password' });
      expect([unknown.status, unknown.body]).toEqual([422, expected]);
    });

    it('throttles failed attempts per email and address, with Retry-After', async () => {
      const account = await createAccount(stack);
      for (let attempt = 0; attempt < 3; attempt++) {
        await stack.http.post('/api/auth/login').send({ email: account.email, password: 'nope-nope' }).expect(422);
      }
      const blocked = await stack.http
        .post('/api/auth/login')
        .send({ email: account.email, password: account.password });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual({ message: 'Too Many Attempts.' });
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);

      // Another email from the same address is not affected.
      const other = await createAccount(stack);
      await stack.http.post('/api/auth/login').send({ email: other.email, password: other.password }).expect(200);
    });

    it('checks at most the limit of passwords however many attempts arrive at once', async () => {
      const account = await createAccount(stack);
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          stack.http.post('/api/auth/login').send({ email: account.email, password: 'wrong-password' }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      // LOGIN_ATTEMPTS_PER_MINUTE is 3 here: three wrong passwords are checked (422), every other attempt is 429.
      expect(statuses.filter((status) => status === 422)).toHaveLength(3);
      expect(statuses.filter((status) => status === 429)).toHaveLength(37);
    });
  });

  describe('logout', () => {
    it('ends the session used, and only that one', async () => {
      const account = await createAccount(stack);
      const second = await stack.http
        .post('/api/auth/login')
        .send({ email: account.email, password: account.password })
        .expect(200);
      const response = await stack.http.post('/api/auth/logout').set(account.auth).expect(200);
      expect(response.body).toEqual({ message: expect.any(String) });
      const refused = await stack.http.get('/api/user/me').set(account.auth).expect(401);
      expect(refused.body).toEqual({ message: 'Unauthenticated.' });
      await stack.http.get('/api/user/me').set(bearer(second.body.token)).expect(200);
    });
  });

  describe('every 401 case answers the same body', () => {
    const unauthenticated = { message: 'Unauthenticated.' };

    it('missing header', async () => {
      const response = await stack.http.get('/api/user/me').expect(401);
      expect(response.body).toEqual(unauthenticated);
    });

    it('wrong scheme', async () => {
      const account = await createAccount(stack);
      const response = await stack.http.get('/api/user/me').set('Authorization', `Basic ${account.token}`).expect(401);
      expect(response.body).toEqual(unauthenticated);
      await stack.http.get('/api/user/me').set('Authorization', account.token).expect(401);
    });

    it('token in the query string', async () => {
      const account = await createAccount(stack);
      for (const name of ['token', 'api_token', 'access_token']) {
        const response = await stack.http.get(`/api/user/me?${name}=${account.token}`).expect(401);
        expect(response.body).toEqual(unauthenticated);
      }
    });

    it('malformed token, refused before any token lookup', async () => {
      const valid = generateToken('apiKey');
      const badChecksum = valid.slice(0, -1) + (valid.endsWith('a') ? 'b' : 'a');
      const queries = recordQueries(stack.dataSource);
      try {
        for (const token of ['garbage', badChecksum, 'vak_', `xyz_${valid.slice(4)}`]) {
          const response = await stack.http.get('/api/user/me').set(bearer(token)).expect(401);
          expect(response.body).toEqual(unauthenticated);
        }
        // With QUEUE_BACKEND=postgres the request's rate-limit count is a query too; no other may run.
        const lookups = queries.statements().filter((sql) => !sql.includes('rate_windows'));
        expect(lookups).toEqual([]);
      } finally {
        queries.restore();
      }
    });

    it('well-formed token that was never issued', async () => {
      await stack.http
        .get('/api/user/me')
        .set(bearer(generateToken('apiKey')))
        .expect(401);
      await stack.http
        .get('/api/user/me')
        .set(bearer(generateToken('session')))
        .expect(401);
    });

    it('expired session', async () => {
      const account = await createAccount(stack);
      await stack.http.get('/api/user/me').set(account.auth).expect(200);
      await stack.dataSource.query(
        `UPDATE session_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1`,
        [account.id],
      );
      const response = await stack.http.get('/api/user/me').set(account.auth).expect(401);
      expect(response.body).toEqual(unauthenticated);
    });

    it('revoked API key (covered with the key lifecycle) and logged-out session (above) use the same body', async () => {
      const account = await createAccount(stack);
      const created = await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'k' }).expect(201);
      const [{ id }] = (await stack.http.get('/api/user/api-keys').set(account.auth)).body.api_keys;
      await stack.http.delete(`/api/user/api-keys/${id}`).set(account.auth).expect(200);
      const response = await stack.http.get('/api/user/me').set(bearer(created.body.api_key.token)).expect(401);
      expect(response.body).toEqual(unauthenticated);
    });
  });

  it('refuses registration when it is turned off', async () => {
    const closed = await startStack({ worker: false, env: { REGISTRATION_ENABLED: 'false' } });
    try {
      const response = await closed.http
        .post('/api/auth/register')
        .send({ name: 'X', email: 'closed@example.com', password: 'password-123' });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'Registration is disabled.' });
    } finally {
      await closed.close();
    }
  });
});
