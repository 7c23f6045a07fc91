import { redisOptionsFromUrl } from './redis-options';

describe('redisOptionsFromUrl', () => {
  it('fills in REDIS_USERNAME and REDIS_PASSWORD only where the URL has none', () => {
    const credentials = { username: 'service', password: 'from-env' };
    expect(redisOptionsFromUrl('rediss://cache:6380/2', credentials)).toEqual({
      host: 'cache',
      port: 6380,
      username: 'service',
      password: 'from-env',
      db: 2,
      tls: {},
    });
    expect(redisOptionsFromUrl('redis://me:in%20url@cache', credentials)).toMatchObject({
      username: 'me',
      password: 'in url',
      db: 0,
      tls: undefined,
    });
  });
});
