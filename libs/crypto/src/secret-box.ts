import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Leads every sealed value so a future key or algorithm can be told apart from this one. */
const VERSION = 'v1';

export class SecretDecryptionError extends Error {
  constructor() {
    super('A stored secret could not be decrypted (wrong key, or the value was moved or altered)');
    this.name = 'SecretDecryptionError';
  }
}

/**
 * Encrypts secrets at rest (tool header values, SIP passwords, webhook secrets) with AES-256-GCM.
 * Each value gets a fresh nonce; the `context` (for example `tool:42:header`) is bound as associated data,
 * so a sealed value copied onto another row or field fails to open instead of revealing itself there.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  /** `v1.<nonce>.<ciphertext+tag>`, base64url parts: text that fits any varchar/text column. */
  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  open(sealed: string, context: string): string {
    const [version, nonceText, bodyText, ...rest] = sealed.split('.');
    if (version !== VERSION || !nonceText || !bodyText || rest.length > 0) throw new SecretDecryptionError();
    const nonce = Buffer.from(nonceText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) throw new SecretDecryptionError();
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new SecretDecryptionError();
    }
  }
}
