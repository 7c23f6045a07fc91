import { randomBytes } from 'node:crypto';
import type { Stack } from './stack';

export interface TestAccount {
  id: number;
  email: string;
  password: string;
  token: string;
  /** Authorization header value for this account's session token. */
  auth: { Authorization: string };
}

/** Registers a fresh account through the API and returns its session token. */
export async function createAccount(stack: Stack, name = 'Test User'): Promise<TestAccount> {
  const email = `user-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  const response = await stack.http.post('/api/auth/register').send({ name, email, password }).expect(201);
  const token: string = response.body.token;
  return { id: response.body.user.id, email, password, token, auth: { Authorization: `Bearer ${token}` } };
}

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}
