import { fillVariables, mergeCallVariables } from './call-variables';

describe('call variables', () => {
  it('merges the assistant’s, the lead’s and the call’s, a later one winning', () => {
    expect(
      mergeCallVariables({ name: 'there', company: 'Acme', tone: 'warm' }, { name: 'Ada' }, { name: 'Ada L.' }),
    ).toEqual({ name: 'Ada L.', company: 'Acme', tone: 'warm' });
  });

  it('never copies a key that reaches the prototype', () => {
    const merged = mergeCallVariables(JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'));
    expect(merged).toEqual({ a: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fills each placeholder once and leaves unknown names as written', () => {
    const variables = { name: 'Ada {{secret}}', secret: 'hunter2', count: 3, vip: true, nothing: null };
    expect(fillVariables('Hi {{ name }}, {{count}} orders, vip={{vip}}{{nothing}}, {{unknown}}.', variables)).toBe(
      'Hi Ada {{secret}}, 3 orders, vip=true, {{unknown}}.',
    );
    expect(fillVariables(null, variables)).toBeNull();
    expect(fillVariables('{{toString}} {{constructor}}', {})).toBe('{{toString}} {{constructor}}');
  });
});
