import { generateToken, hashToken, parseToken } from './tokens';

describe('tokens', () => {
  it('generates distinct tokens that parse back to their kind', () => {
    const apiKey = generateToken('apiKey');
    const session = generateToken('session');
    expect(apiKey).toMatch(/^vak_[0-9A-Za-z]{49}$/);
    expect(session).toMatch(/^vas_[0-9A-Za-z]{49}$/);
    expect(parseToken(apiKey)).toBe('apiKey');
    expect(parseToken(session)).toBe('session');
    expect(generateToken('apiKey')).not.toBe(apiKey);
  });

  it('refuses a token with one character changed', () => {
    const token = generateToken('apiKey');
    const index = 10;
    const changed = token.slice(0, index) + (token[index] === 'a' ? 'b' : 'a') + token.slice(index + 1);
    expect(parseToken(changed)).toBeNull();
  });

  it('refuses other shapes', () => {
    expect(parseToken('')).toBeNull();
    expect(parseToken('vak_short')).toBeNull();
    expect(parseToken('xyz_' + 'a'.repeat(49))).toBeNull();
    expect(parseToken(generateToken('apiKey') + 'x')).toBeNull();
  });

  it('hashes to 64 hex characters, deterministically', () => {
    expect(hashToken('abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken('abc')).toBe(hashToken('abc'));
  });
});
