import type request from 'supertest';

type Schema = Record<string, any>;

/** The public document (REST consumers) and the voice runtime's (every `/api/internal/` path). */
export const DOCUMENT_URLS = { public: '/api/docs-json', internal: '/api/internal/docs-json' } as const;

export interface ServedDocuments {
  public: Schema;
  internal: Schema;
}

/** Both documents as the API serves them, without a token. */
export async function servedDocuments(http: ReturnType<typeof request>): Promise<ServedDocuments> {
  const [publicDocument, internal] = await Promise.all(
    [DOCUMENT_URLS.public, DOCUMENT_URLS.internal].map(async (url) => (await http.get(url).expect(200)).body as Schema),
  );
  return { public: publicDocument, internal };
}

/**
 * Both documents as one, for the tests that walk every documented route: the paths of both and the schemas of
 * both (one generation's, so a name means the same schema in each).
 */
export function everyRoute(documents: ServedDocuments): Schema {
  const schemas: Schema = { ...documents.public.components.schemas };
  for (const [name, schema] of Object.entries<Schema>(documents.internal.components.schemas)) {
    if (name in schemas && JSON.stringify(schemas[name]) !== JSON.stringify(schema))
      throw new Error(`The schema ${name} differs between the documents`);
    schemas[name] = schema;
  }
  return {
    ...documents.public,
    paths: { ...documents.public.paths, ...documents.internal.paths },
    components: { ...documents.public.components, schemas },
  };
}
