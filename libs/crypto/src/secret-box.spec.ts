import { randomBytes } from 'node:crypto';
import { SecretBox, SecretDecryptionError } from './secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same context', () => {
    const sealed = box.seal('Bearer sk_live_123', 'tool:1:header');
    expect(box.open(sealed, 'tool:1:header')).toBe('Bearer sk_live_123');
  });

  it('never shows the plaintext and uses a fresh nonce each time', () => {
    const first = box.seal('hunter2', 'ctx');
    const second = box.seal('hunter2', 'ctx');
    expect(first).not.toContain('hunter2');
    expect(first).not.toBe(second);
  });

  it('refuses a value moved to another context (row or field)', () => {
    const sealed = box.seal('secret', 'tool:1:header');
    expect(() => box.open(sealed, 'tool:2:header')).toThrow(SecretDecryptionError);
  });

  it('refuses an altered value, a malformed one and another key', () => {
    const sealed = box.seal('secret', 'ctx');
    const [version, nonce, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(() => box.open(`${version}.${nonce}.${flipped.toString('base64url')}`, 'ctx')).toThrow(
      SecretDecryptionError,
    );
    expect(() => box.open('not sealed', 'ctx')).toThrow(SecretDecryptionError);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'ctx')).toThrow(SecretDecryptionError);
  });

  it('handles empty and non-ASCII values', () => {
    expect(box.open(box.seal('', 'ctx'), 'ctx')).toBe('');
    expect(box.open(box.seal('pässwörd ☎', 'ctx'), 'ctx')).toBe('pässwörd ☎');
  });
});
