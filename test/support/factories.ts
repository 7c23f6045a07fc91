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

/** The id of a seeded language (English unless named), as an assistant's `language_id`. */
export async function languageId(stack: Stack, account: TestAccount, iso2 = 'en'): Promise<number> {
  const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200)).body as {
    id: number;
    iso_2: string;
  }[];
  return languages.find((language) => language.iso_2 === iso2)!.id;
}

/**
 * Writes passages into a document after its last (its account and knowledgebase its own), as the worker writes them:
 * for passages no upload would give (a count, a length or an order a test needs).
 */
export async function appendPassages(stack: Stack, documentId: number, contents: string[]): Promise<void> {
  await stack.dataSource.query(
    `INSERT INTO passages (user_id, knowledgebase_id, document_id, position, content)
     SELECT document.user_id, document.knowledgebase_id, document.id, written.last + item.position, item.content
       FROM documents document,
            LATERAL (SELECT coalesce(max(position), 0) AS last FROM passages WHERE document_id = document.id) written,
            unnest($2::text[]) WITH ORDINALITY AS item(content, position)
      WHERE document.id = $1`,
    [documentId, contents],
  );
}

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

/**
 * A valid US number no other test of the run holds: a trunk's number has one holder across all accounts, and every
 * e2e file of a run shares one database. Drawn from 8,000,000 numbers, so two draws of a run practically never meet.
 */
export function unheldNumber(): string {
  const exchange = 200 + Math.floor(Math.random() * 800);
  const line = String(Math.floor(Math.random() * 10_000)).padStart(4, '0');
  return `+1415${exchange}${line}`;
}

/** A SIP trunk create request the local provisioner accepts, on a number no other test holds. */
export function sipTrunkRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sip_trunk_type: 'number',
    phone_number: unheldNumber(),
    sip_username: 'acme',
    sip_password: 'a-long-secret',
    sip_address: 'sip.carrier.example.com',
    ...overrides,
  };
}
