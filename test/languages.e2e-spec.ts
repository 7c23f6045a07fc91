import { createAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';

describe('GET /api/user/assistants/languages', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  it('returns at least 40 languages as a bare array, ordered by name', async () => {
    const account = await createAccount(stack);
    const response = await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200);
    const languages: { id: number; name: string; iso_2: string }[] = response.body;
    expect(Array.isArray(languages)).toBe(true);
    expect(languages.length).toBeGreaterThanOrEqual(40);
    for (const language of languages) {
      expect(Object.keys(language).sort()).toEqual(['id', 'iso_2', 'name']);
      expect(language.id).toEqual(expect.any(Number));
      expect(language.iso_2).toMatch(/^[a-z]{2}$/);
    }
    const names = languages.map((language) => language.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    expect(new Set(languages.map((language) => language.iso_2)).size).toBe(languages.length);
  });

  it('uses correct ISO 639-1 codes', async () => {
    const account = await createAccount(stack);
    const response = await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200);
    const byName = new Map<string, string>(
      response.body.map((language: { name: string; iso_2: string }) => [language.name, language.iso_2]),
    );
    const expected: Record<string, string> = {
      English: 'en',
      German: 'de',
      French: 'fr',
      Spanish: 'es',
      Italian: 'it',
      Dutch: 'nl',
      Polish: 'pl',
      Portuguese: 'pt',
      Chinese: 'zh',
      Japanese: 'ja',
      Korean: 'ko',
      Greek: 'el',
      Czech: 'cs',
      Danish: 'da',
      Swedish: 'sv',
      Hebrew: 'he',
      Ukrainian: 'uk',
      Persian: 'fa',
      Estonian: 'et',
      Slovenian: 'sl',
    };
    for (const [name, code] of Object.entries(expected)) expect([name, byName.get(name)]).toEqual([name, code]);
  });

  it('needs authentication', async () => {
    const response = await stack.http.get('/api/user/assistants/languages').expect(401);
    expect(response.body).toEqual({ message: 'Unauthenticated.' });
  });
});
