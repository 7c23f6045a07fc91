import { evictionPolicyOf, evictionPolicyProblem } from './eviction-policy';

const info = (policy: string) => `# Memory\r\nused_memory:1024\r\nmaxmemory:0\r\nmaxmemory_policy:${policy}\r\n`;

describe('Redis eviction policy check', () => {
  it('reads the policy from INFO memory', () => {
    expect(evictionPolicyOf(info('allkeys-lru'))).toBe('allkeys-lru');
  });

  it('accepts noeviction and an INFO without the field', () => {
    expect(evictionPolicyProblem(info('noeviction'))).toBeUndefined();
    expect(evictionPolicyProblem('# Memory\r\nused_memory:1\r\n')).toBeUndefined();
  });

  it.each(['allkeys-lru', 'volatile-lru', 'allkeys-random', 'volatile-ttl', 'allkeys-lfu'])(
    'refuses %s, naming the setting to change',
    (policy) => {
      expect(evictionPolicyProblem(info(policy))).toMatch(new RegExp(`maxmemory-policy ${policy}.*noeviction`));
    },
  );
});
