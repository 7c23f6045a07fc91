import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { loadConfig } from '@app/config';
import { requestExampleOf } from '@app/contracts';
import { REQUEST_BODIES_EXTENSION } from '@app/platform';
import { ApiModule } from './api.module';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The voice runtime's routes: their own document, with their own token (see RuntimeTokenGuard). */
const INTERNAL_PATH_PREFIX = '/api/internal/';
const isInternalPath = (path: string) => path.startsWith(INTERNAL_PATH_PREFIX);
/** Liveness and readiness are for operations staff and their probes (see docs/operations.md), in neither document. */
const isHealthPath = (path: string) => path === '/api/health' || path.startsWith('/api/health/');

/** What each section of Swagger UI is about; a tag an operation names without one here fails the document's lint. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Authentication: 'Register an account, and sign in and out with a session token',
  'API keys': 'Tokens for integrations: kept until deleted',
  Settings: 'The account’s settings: the ring-time hook its numbers ask unless they name their own',
  Assistants: 'The AI voice assistants that answer and place calls, and the languages they speak',
  Knowledgebases: 'What assistants know: websites crawled and files parsed into passages, and their search',
  'Mid-call tools': 'HTTP endpoints an assistant calls during a call, and test calls to them',
  Telephony: 'SIP trunks and the phone numbers assistants call from and answer',
  Folders: 'Folders to sort assistants into',
  Labels: 'Coloured labels to mark assistants with',
  Campaigns: 'Outbound campaigns: an assistant calling a list of leads, started and stopped',
  Leads: 'The people a campaign calls, one by one or imported from CSV',
  Calls: 'Calls placed and answered, their transcripts and post-call analyses, and single calls placed now',
  Usage: 'What the account used, day by day: calls, minutes and the model provider’s tokens',
  'Voice runtime': 'What the voice runtime calls while it answers and places calls',
};

/** The security scheme of the internal document. */
const RUNTIME_SECURITY_SCHEME = 'runtime';

export interface ApiDocuments {
  /** What REST consumers read (`/api/docs-json`): every route but the voice runtime's and health. */
  public: OpenAPIObject;
  /** What the voice runtime's developers read (`/api/internal/docs-json`): exactly the `/api/internal/` routes. */
  internal: OpenAPIObject;
  /**
   * Every route, health included, as generated before the split (the internal routes without their security
   * scheme, which only the internal document defines). Served by neither route; the tests check the health
   * answers against it.
   */
  whole: OpenAPIObject;
}

/**
 * The OpenAPI documents, generated from the controllers and DTOs in one pass and split by path: the voice
 * runtime's routes (every path under `/api/internal/`, whatever its controller declares) go to their own document,
 * authenticated by the runtime's token; health goes to neither; everything else is the public document.
 *
 * In the public document bearer authentication is the default; an operation that declares no security of its own
 * (login, register) is marked public with `security: []`, so clients and Swagger UI do not send a token
 * there. Bodies declared per media type (`ApiBodyPerMediaType`) replace the body inferred from the handler's DTO.
 */
export function createApiDocuments(app: INestApplication): ApiDocuments {
  const whole = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Voice Assistant Management API')
      .setDescription(
        'Manage API keys, knowledgebases, tools, SIP trunks, assistants, campaigns, leads and calls. ' +
          'Authenticate with `Authorization: Bearer <token>`, where the token is an API key (`vak_...`) or a ' +
          'session token from `POST /api/auth/login` (`vas_...`). Errors come in three shapes: ' +
          '`{message, errors}` for validation (422), `{message}` and `{error}`.',
      )
      .setVersion('1.0')
      .addServer('/', 'The host serving this document')
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key (vak_...) or session token (vas_...)',
        description: 'An API key or a session token',
      })
      .addSecurityRequirements('bearer')
      .build(),
    // Each controller names its tag; Nest's own tag from the class name would list auth routes twice.
    { autoTagControllers: false },
  );
  for (const [path, operations] of Object.entries(whole.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = operations[method];
      if (!operation) continue;
      // Every internal route takes the runtime's token (the internal document's default), whatever it declares.
      if (isInternalPath(path)) delete operation.security;
      else if (!operation.security) operation.security = [];
      // Path ids are parsed by ResourceIdPipe: whole numbers only, whatever the handler's TypeScript type says. Their
      // example is the first id a fresh install hands out, which "Try it out" fills in.
      for (const parameter of operation.parameters ?? []) {
        if ('in' in parameter && parameter.in === 'path' && parameter.schema && 'type' in parameter.schema) {
          if (parameter.schema.type === 'number') parameter.schema.type = 'integer';
          if (parameter.schema.type === 'integer') parameter.example ??= 1;
        }
      }
      // Idempotency keys are kept per user: the runtime's routes, which no user calls, do not read them.
      if (method === 'post' && operation.responses['201'] && operation.security && operation.security.length > 0)
        documentIdempotency(operation);
      const bodies = (operation as unknown as Record<string, unknown>)[REQUEST_BODIES_EXTENSION];
      if (bodies) {
        operation.requestBody = { required: true, content: bodies as Record<string, object> };
        delete (operation as unknown as Record<string, unknown>)[REQUEST_BODIES_EXTENSION];
      }
    }
  }
  // package.json's UNLICENSED, and npm's page saying what it means: no right to use the API is granted by a license.
  whole.info.license = {
    name: 'UNLICENSED (proprietary)',
    url: 'https://docs.npmjs.com/cli/v11/configuring-npm/package-json#license',
  };
  // Every tag an operation names is declared, in the order the operations come (Swagger UI's order of sections).
  whole.tags = [
    ...new Set(
      Object.values(whole.paths).flatMap((operations) =>
        HTTP_METHODS.flatMap((method) => operations[method]?.tags ?? []),
      ),
    ),
  ].map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) }));
  pruneUnusedSchemas(whole);
  exampleReferencesThatExist(whole);
  expressNullsStrictly(whole);

  const internal = documentOf(whole, isInternalPath);
  internal.info = {
    ...internal.info,
    title: 'Voice Runtime API',
    description:
      'What the voice runtime (the LiveKit Agents worker, or any other) calls while it answers and places calls: ' +
      "every route under `/api/internal/`. Authenticate with `Authorization: Bearer <token>`: the deployment's " +
      "`RUNTIME_API_TOKEN`, or the call token (`vrc_...`) a session returns, for that call's routes. A user's " +
      'token is refused (401). Errors come in three shapes: `{message, errors}` for validation (422), ' +
      '`{message}` and `{error}`.',
  };
  internal.components!.securitySchemes = {
    [RUNTIME_SECURITY_SCHEME]: {
      type: 'http',
      scheme: 'bearer',
      description: "The deployment's RUNTIME_API_TOKEN, or a call token (vrc_...) for that call's routes",
    },
  };
  internal.security = [{ [RUNTIME_SECURITY_SCHEME]: [] }];
  return { public: documentOf(whole, (path) => !isInternalPath(path) && !isHealthPath(path)), internal, whole };
}

/**
 * The same documents without a server: the API's modules assembled in Nest's preview mode, which reads the
 * controllers' metadata and instantiates no provider, so nothing connects to PostgreSQL or Redis. From a fixed
 * configuration rather than the environment (none of it shapes the documents), so every machine gets the same
 * document; the SDK is generated from it (scripts/generate-sdk.ts), and sdk/typescript/test checks it against the
 * document a booted API serves.
 */
export async function createApiDocumentsWithoutServer(): Promise<ApiDocuments> {
  const config = loadConfig({ ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') });
  const app = await NestFactory.create(ApiModule.forRoot(config), { preview: true, logger: false });
  // The prefix createHttpApp gives every route.
  app.setGlobalPrefix('api');
  try {
    return createApiDocuments(app);
  } finally {
    await app.close();
  }
}

/** A copy of the document with the paths `included` names, the tags and schemas they use, and nothing else. */
function documentOf(whole: OpenAPIObject, included: (path: string) => boolean): OpenAPIObject {
  const document = structuredClone(whole);
  document.paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => included(path)));
  if (document.tags) {
    const used = new Set(
      Object.values(document.paths).flatMap((operations) =>
        HTTP_METHODS.flatMap((method) => operations[method]?.tags ?? []),
      ),
    );
    document.tags = document.tags.filter((tag) => used.has(tag.name));
  }
  pruneUnusedSchemas(document);
  return document;
}

/**
 * Swagger UI's "Try it out" fills a property without an example with its type's zero: `0` for an id, `[0]` for a
 * list of ids, which no account holds, so the request fails on a reference the caller never meant to send. In
 * request bodies, an optional reference's example is "none" (`null`, or an empty list), and a required one's is 1.
 */
function exampleReferencesThatExist(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaLike>;
  const requestSchemas = schemasNamedIn(
    Object.values(document.paths).flatMap((operations) =>
      HTTP_METHODS.map((method) => operations[method]?.requestBody),
    ),
  );
  for (const name of new Set(requestSchemas)) {
    const schema = schemas[name];
    if (!schema?.properties) continue;
    const required = new Set(schema.required ?? []);
    for (const [property, definition] of Object.entries(schema.properties)) {
      if (!/(^|_)ids?$/.test(property) || definition.example !== undefined) continue;
      if (definition.type === 'array') definition.example = required.has(property) ? [1] : [];
      else if (!required.has(property) && definition.nullable) definition.example = null;
      else definition.example = 1;
    }
    // A form with a file is filled field by field, from the fields' examples: no example of the whole holds a file.
    if (Object.values(schema.properties).some((definition) => definition.format === 'binary')) continue;
    // The body Swagger UI offers: the request's own example, else the required fields only, so nothing optional is
    // sent by accident.
    schema.example ??=
      requestExampleOf(name) ??
      Object.fromEntries([...required].map((property) => [property, exampleOf(schema.properties![property])]));
  }
}

function exampleOf(definition: PropertyLike): unknown {
  if (definition.example !== undefined) return definition.example;
  if (definition.enum?.length) return definition.enum.find((value) => value !== null);
  if (definition.format === 'email') return 'ada@example.com';
  if (definition.format === 'uri' || definition.format === 'url') return 'https://example.com';
  if (definition.format === 'binary') return undefined;
  if (definition.type === 'integer' || definition.type === 'number') return definition.minimum ?? 1;
  if (definition.type === 'boolean') return true;
  if (definition.type === 'array') return [];
  if (definition.type === 'object') return {};
  return 'example';
}

interface PropertyLike {
  type?: string;
  format?: string;
  enum?: unknown[];
  minimum?: number;
  nullable?: boolean;
  example?: unknown;
}

interface SchemaLike {
  required?: string[];
  properties?: Record<string, PropertyLike>;
  example?: unknown;
}

/**
 * OpenAPI 3.0's `nullable` as validators and generators read it: an enum that may be null lists `null` among its
 * values, and a reference that may be null becomes "the referenced object, or null" (`nullable` beside a `$ref` is
 * ignored, as every sibling of a `$ref` is).
 */
function expressNullsStrictly(document: OpenAPIObject): void {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const record = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value)]));
    if (record.nullable === true && Array.isArray(record.enum) && !record.enum.includes(null))
      record.enum = [...record.enum, null];
    if (typeof record.$ref === 'string' && record.nullable === true) {
      const { $ref, nullable: _nullable, ...siblings } = record;
      return { ...siblings, anyOf: [{ $ref }, { type: 'object', nullable: true, enum: [null] }] };
    }
    return record;
  };
  document.paths = visit(document.paths) as OpenAPIObject['paths'];
  if (document.components?.schemas)
    document.components.schemas = visit(document.components.schemas) as typeof document.components.schemas;
}

/** Drops component schemas nothing refers to (a handler's DTO whose body is documented per media type). */
function pruneUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const used = new Set<string>();
  const pending: unknown[] = [document.paths];
  while (pending.length > 0) {
    for (const name of schemasNamedIn(pending.pop())) {
      if (used.has(name)) continue;
      used.add(name);
      pending.push(schemas[name] ?? {});
    }
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/** The component schemas a part of the document refers to by `$ref` (directly, not through other schemas). */
function schemasNamedIn(part: unknown): string[] {
  return [...JSON.stringify(part).matchAll(/#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]);
}

/** Every create accepts `Idempotency-Key` (see IdempotencyInterceptor), with the answers it adds. */
function documentIdempotency(operation: OperationObject): void {
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Retrying with the same key and body within 24 hours returns the first answer (with ' +
        '`Idempotent-Replayed: true`) instead of creating again.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
  ];
  operation.responses['409'] = {
    description: 'A request with this Idempotency-Key is still being processed',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/MessageResponse' } } },
  };
  operation.responses['422'] ??= {
    description: 'The Idempotency-Key was used for a different request',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationErrorResponse' } } },
  };
}

/**
 * Serves both documents as the HTTP adapter's own routes, outside Nest's router: no guard runs there, so neither
 * needs a token (the internal one describes no secret, and the runtime's developers read it) and neither counts
 * against a rate limit.
 */
export function serveApiDocument(app: INestApplication): void {
  const documents = createApiDocuments(app);
  SwaggerModule.setup('api/docs', app, documents.public, {
    jsonDocumentUrl: 'api/docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
  SwaggerModule.setup('api/internal/docs', app, documents.internal, {
    jsonDocumentUrl: 'api/internal/docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
}
