import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Bearer tokens look like `vak_<43 base62 chars><6 base62 checksum chars>`: `vak` an API key, `vas` a session, `vrc`
 * the voice runtime's token for one call. The prefix says what kind of token it is (and lets secret scanners find
 * leaked keys); the CRC32 checksum lets the API refuse a mistyped or made-up token without touching the database.
 */
export const TokenKinds = { apiKey: 'vak', session: 'vas', call: 'vrc' } as const;
export type TokenKind = keyof typeof TokenKinds;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // 32 random bytes in base62
const CHECKSUM_LENGTH = 6; // a 32-bit CRC in base62
const TOKEN_PATTERN = new RegExp(
  `^(${Object.values(TokenKinds).join('|')})_([0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}})$`,
);

function base62(value: bigint, length: number): string {
  let text = '';
  let rest = value;
  while (rest > 0n) {
    text = ALPHABET[Number(rest % 62n)] + text;
    rest /= 62n;
  }
  return text.padStart(length, '0');
}

function checksum(prefix: string, body: string): string {
  return base62(BigInt(crc32(`${prefix}_${body}`)), CHECKSUM_LENGTH);
}

export function generateToken(kind: TokenKind): string {
  const prefix = TokenKinds[kind];
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${prefix}_${body}${checksum(prefix, body)}`;
}

/** The kind of a well-formed token with a valid checksum, or null for anything else. */
export function parseToken(token: string): TokenKind | null {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return null;
  const [, prefix, rest] = match;
  const body = rest.slice(0, BODY_LENGTH);
  if (checksum(prefix, body) !== rest.slice(BODY_LENGTH)) return null;
  return (Object.keys(TokenKinds) as TokenKind[]).find((kind) => TokenKinds[kind] === prefix) ?? null;
}

/** What is stored and looked up: SHA-256 suffices because the token carries 256 random bits. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
