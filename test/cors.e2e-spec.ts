import { type Stack, startStack } from './support/stack';

describe('CORS', () => {
  describe('when no origins are configured (the default)', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ worker: false });
    });
    afterAll(() => stack.close());

    it('sends no CORS headers', async () => {
      const response = await stack.http.get('/api/health').set('Origin', 'https://app.example.com').expect(200);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('with CORS_ORIGINS', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({
        worker: false,
        env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com/' },
      });
    });
    afterAll(() => stack.close());

    it('answers a preflight from an allowed origin', async () => {
      const response = await stack.http
        .options('/api/user/knowledgebases')
        .set('Origin', 'https://admin.example.com')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe('https://admin.example.com');
      expect(response.headers['access-control-allow-methods']).toMatch(/POST/);
    });

    it('exposes the headers clients need, and ignores other origins', async () => {
      const allowed = await stack.http.get('/api/health').set('Origin', 'https://app.example.com').expect(200);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(allowed.headers['access-control-expose-headers']).toMatch(/X-Request-Id/);
      const other = await stack.http.get('/api/health').set('Origin', 'https://evil.example.net').expect(200);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});
