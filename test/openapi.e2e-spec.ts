import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { createApiDocuments } from '../apps/api/src/api-document';
import { DOCUMENT_URLS, everyRoute, type ServedDocuments, servedDocuments } from './support/api-documents';
import { OpenApiConformance } from './support/openapi-conformance';
import { type Stack, startStack } from './support/stack';

const isInternal = (path: string) => path.startsWith('/api/internal/');
const isHealth = (path: string) => path === '/api/health' || path.startsWith('/api/health/');

describe('OpenAPI documents', () => {
  let stack: Stack;
  let documents: ServedDocuments;

  beforeAll(async () => {
    // Discovery lists the app's controllers, to compare them with the documents; the worker provisions the SIP trunk
    // that the request examples create.
    stack = await startStack({ apiModules: [DiscoveryModule] });
    documents = await servedDocuments(stack.http);
  });
  afterAll(() => stack.close());

  it('serves Swagger UI and the JSON document, the public one and the voice runtime’s', async () => {
    for (const ui of ['/api/docs', '/api/internal/docs'])
      expect((await stack.http.get(ui).expect(200)).text).toContain('swagger');
    for (const url of Object.values(DOCUMENT_URLS)) {
      const json = await stack.http.get(url).expect(200);
      expect(json.body.openapi).toMatch(/^3\./);
    }
  });

  it('serves the voice runtime’s document without a token, which the user API’s authentication never refuses', async () => {
    // Like the public one, outside Nest's router: no token, a user's, the runtime's or a wrong one, all read it.
    for (const authorization of [undefined, 'Bearer vak_not-a-key', 'Bearer vrc_not-a-call-token', 'Basic eDp5']) {
      const request = stack.http.get(DOCUMENT_URLS.internal);
      const response = await (authorization ? request.set('Authorization', authorization) : request);
      expect({ authorization, status: response.status }).toEqual({ authorization, status: 200 });
      expect(response.body).toEqual(documents.internal);
    }
  });

  /** Every route of the app's controllers, as the documents spell them. */
  const controllerRoutes = () =>
    stack.api
      .get(DiscoveryService)
      .getControllers()
      .flatMap((wrapper) => {
        const controller = wrapper.metatype as { prototype: Record<string, unknown> } | undefined;
        if (!controller) return [];
        const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
        return Object.getOwnPropertyNames(controller.prototype)
          .filter((name) => Reflect.getMetadata(METHOD_METADATA, controller.prototype[name] as object) !== undefined)
          .map((name) => {
            const handler = controller.prototype[name] as object;
            const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler)].toLowerCase();
            const path = String(Reflect.getMetadata(PATH_METADATA, handler));
            const full = `/api/${[base, path].filter((part) => part && part !== '/').join('/')}`
              .replace(/\/+/g, '/')
              .replace(/\/$/, '')
              .replace(/:(\w+)/g, '{$1}');
            return { method, path: full };
          });
      });

  it('lists every route of the API in the document for its path, with a response schema, and request schemas for bodies', async () => {
    const routes = controllerRoutes();
    expect(routes.length).toBeGreaterThan(8);
    for (const route of routes) {
      // The voice runtime's routes in its document, health in neither (operations staff's), the rest in the public one.
      const where = isInternal(route.path) ? 'internal' : isHealth(route.path) ? 'none' : 'public';
      const documentedIn = (['public', 'internal'] as const).filter(
        (name) => documents[name].paths[route.path]?.[route.method],
      );
      expect({ route, documentedIn }).toEqual({ route, documentedIn: where === 'none' ? [] : [where] });
      if (where === 'none') continue;
      const operation = documents[where].paths[route.path][route.method];
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
      expect({ route, hasSuccessResponse: Boolean(success) }).toEqual({ route, hasSuccessResponse: true });
    }
    expect(routes.filter((route) => isHealth(route.path)).length).toBeGreaterThan(0);

    const document = documents.public;
    const createKey = document.paths['/api/user/api-keys'].post;
    expect(createKey.requestBody.content['application/json'].schema.$ref).toMatch(/CreateApiKeyRequest$/);
    expect(createKey.responses['201'].content['application/json'].schema.$ref).toMatch(/CreateApiKeyResponse$/);
    expect(document.components.schemas.CreateApiKeyRequest.required).toEqual(['name']);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  const operations = (document: any) =>
    Object.entries<Record<string, any>>(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    );

  it('gives every operation a unique readable id, a one-line summary and one tag', async () => {
    const ids = operations(everyRoute(documents)).map(({ route, operation }) => ({
      route,
      operationId: operation.operationId,
      readable: /^[a-z][A-Za-z]+$/.test(operation.operationId ?? ''),
      summary: typeof operation.summary === 'string' && /^[^\n]+$/.test(operation.summary),
      tags: (operation.tags as string[] | undefined)?.length,
    }));
    for (const id of ids) expect(id).toEqual({ ...id, readable: true, summary: true, tags: 1 });
    expect(new Set(ids.map((id) => id.operationId)).size).toBe(ids.length);
  });

  it('documents the errors clients receive, and public routes as public', async () => {
    const document = documents.public;
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.components.securitySchemes.bearer.bearerFormat).not.toMatch(/JWT/);
    for (const { route, operation } of operations(everyRoute(documents))) {
      const statuses = Object.keys(operation.responses);
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      const expected = ['400', '413', '429', '500', '503', ...(isPublic ? [] : ['401'])];
      expect({ route, missing: expected.filter((status) => !statuses.includes(status)) }).toEqual({
        route,
        missing: [],
      });
      if (statuses.includes('422')) {
        expect(operation.responses['422'].content['application/json'].schema.$ref).toMatch(/ValidationErrorResponse$/);
      }
    }
    const publicRoutes = operations(everyRoute(documents))
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ route }) => route)
      .sort();
    expect(publicRoutes).toEqual(['POST /api/auth/login', 'POST /api/auth/register']);
  });

  /** The component schemas the document's paths use, directly or through other schemas. */
  const schemasUsedBy = (document: any, paths: object[]) => {
    const used = new Set<string>();
    const pending: unknown[] = [...paths];
    while (pending.length > 0) {
      for (const [, name] of JSON.stringify(pending.pop()).matchAll(/#\/components\/schemas\/([^"]+)"/g)) {
        if (used.has(name)) continue;
        used.add(name);
        pending.push(document.components.schemas[name]);
      }
    }
    return used;
  };

  it('leaves the voice runtime’s and the health routes out of the public document, with the schemas only they use', () => {
    const document = documents.public;
    expect(Object.keys(document.paths).filter((path) => /^\/api\/(internal|health|metrics)(\/|$)/i.test(path))).toEqual(
      [],
    );
    expect(operations(document).filter(({ operation }) => operation.tags?.includes('Voice runtime'))).toEqual([]);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['bearer']);
    // Nothing the paths left do not use; and what only the runtime's and health routes used is gone.
    expect(Object.keys(document.components.schemas).sort()).toEqual(
      [...schemasUsedBy(document, Object.values(document.paths))].sort(),
    );
    const whole = createApiDocuments(stack.api).whole;
    const theirs = schemasUsedBy(
      whole,
      Object.entries(whole.paths)
        .filter(([path]) => isInternal(path) || isHealth(path))
        .map(([, operations]) => operations),
    );
    const onlyTheirs = [...theirs].filter((name) => !schemasUsedBy(whole, Object.values(document.paths)).has(name));
    expect(onlyTheirs.length).toBeGreaterThan(0);
    expect(onlyTheirs.filter((name) => name in document.components.schemas)).toEqual([]);
  });

  it('describes exactly the /api/internal/ routes in the voice runtime’s document, with the runtime’s token', () => {
    const document = documents.internal;
    const internalRoutes = controllerRoutes()
      .filter((route) => isInternal(route.path))
      .map((route) => `${route.method.toUpperCase()} ${route.path}`)
      .sort();
    expect(internalRoutes.length).toBeGreaterThan(0);
    expect(
      operations(document)
        .map(({ route }) => route)
        .sort(),
    ).toEqual(internalRoutes);
    expect(Object.keys(document.paths).every(isInternal)).toBe(true);
    expect(document.components.securitySchemes).toEqual({
      runtime: {
        type: 'http',
        scheme: 'bearer',
        description: "The deployment's RUNTIME_API_TOKEN, or a call token (vrc_...) for that call's routes",
      },
    });
    // The document's default, which no operation replaces (none is public, none takes a user's token).
    expect(document.security).toEqual([{ runtime: [] }]);
    expect(operations(document).filter(({ operation }) => operation.security !== undefined)).toEqual([]);
    // A user's idempotency keys mean nothing there.
    expect(JSON.stringify(document.paths)).not.toContain('Idempotency-Key');
    expect(Object.keys(document.components.schemas).sort()).toEqual(
      [...schemasUsedBy(document, Object.values(document.paths))].sort(),
    );
    expect(document.info.title).not.toEqual(documents.public.info.title);
  });

  it('types ids, counts and pages as integers and free text as strings', async () => {
    const document = everyRoute(documents);
    const problems: string[] = [];
    const visit = (where: string, schema: any) => {
      for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
        if (/(^id$|_id$|_count$|^total$|page$|^from$|^to$|_ms$)/.test(name) && property.type === 'number') {
          problems.push(`${where}.${name} is a number, not an integer`);
        }
        if (
          property.type === 'object' &&
          !property.properties &&
          !property.additionalProperties &&
          !property.$ref &&
          !property.allOf
        ) {
          problems.push(`${where}.${name} is an object without properties`);
        }
      }
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) visit(name, schema);
    for (const { route, operation } of operations(document)) {
      for (const parameter of operation.parameters ?? []) {
        if (/(^id$|_id$|page$|^limit$)/.test(parameter.name) && parameter.schema?.type === 'number') {
          problems.push(`${route} parameter ${parameter.name} is a number, not an integer`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps one schema per media type for document creation', async () => {
    const document = documents.public;
    const body = document.paths['/api/user/knowledgebases/{knowledgebaseId}/documents'].post.requestBody.content;
    expect(body['application/json'].schema.$ref).toMatch(/CreateWebsiteDocumentBody$/);
    expect(body['multipart/form-data'].schema.$ref).toMatch(/CreateFileDocumentBody$/);
  });

  it('documents the CSV lead import as the multipart upload of a binary file that it is', async () => {
    const document = documents.public;
    const body = document.paths['/api/user/campaign/{id}/leads/import'].post.requestBody;
    expect(Object.keys(body.content)).toEqual(['multipart/form-data']);
    const name = body.content['multipart/form-data'].schema.$ref.split('/').pop();
    expect(document.components.schemas[name]).toMatchObject({
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' } },
    });
  });

  it('lets a nullable enum be null and a nullable reference be null, as validators read OpenAPI 3.0', async () => {
    const { components } = everyRoute(documents);
    const nullableEnums: unknown[][] = [];
    const nullableRefs: unknown[] = [];
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!node || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (record.nullable === true && Array.isArray(record.enum)) nullableEnums.push(record.enum);
      if (typeof record.$ref === 'string' && Object.keys(record).length > 1) nullableRefs.push(record);
      Object.values(record).forEach(visit);
    };
    visit(components.schemas);
    expect(nullableEnums.length).toBeGreaterThan(0);
    for (const values of nullableEnums) expect(values).toContain(null);
    // Nothing beside a $ref, where OpenAPI 3.0 ignores it.
    expect(nullableRefs).toEqual([]);
  });

  // That the API accepts every request example, sent as Swagger UI sends it: test/openapi-examples.e2e-spec.ts.
  it('offers no request example naming 0 for a reference, which no account holds', () => {
    const document = everyRoute(documents);
    for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
      for (const [property, definition] of Object.entries<any>(schema.properties ?? {}))
        if (/(^|_)ids?$/.test(property) && /Request$/.test(name))
          expect({ name, property, example: definition.example }).not.toEqual({ name, property, example: 0 });
    }
  });

  it.each(['public', 'internal'] as const)(
    'passes redocly lint with the project’s strict rules (redocly.yaml), with no warning: the %s document',
    async (name) => {
      const document = documents[name];
      const directory = mkdtempSync(join(tmpdir(), 'openapi-'));
      try {
        const file = join(directory, 'openapi.json');
        writeFileSync(file, JSON.stringify(document));
        const result = await promisify(execFile)(
          process.execPath,
          [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--config', join(__dirname, '..', 'redocly.yaml'), file],
          { cwd: directory, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
        ).catch((error: { stdout: string; stderr: string }) => ({ ...error, failed: true }));
        // No error, and no warning either: a rule left at `warn` would pass the exit code.
        const output = `${result.stdout}${result.stderr}`;
        expect({
          failed: 'failed' in result,
          problems: 'failed' in result || /Warning was generated|You have \d+ warning/.test(output) ? output : '',
        }).toEqual({
          failed: false,
          problems: '',
        });
        expect(output).toMatch(/Your API description is valid/);
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it('has a conformance check that catches undocumented statuses, fields and wrong types', async () => {
    const conformance = new OpenApiConformance(documents.public, documents.internal);
    const json = 'application/json; charset=utf-8';
    const keys = { api_keys: [{ id: 1, name: 'CRM', last_used_at: null, created_at: '2026-01-02T03:04:05.000Z' }] };
    expect(conformance.check('get', '/api/user/api-keys', 200, json, keys)).toBeUndefined();
    expect(conformance.check('get', '/api/user/api-keys', 418, json, {})).toMatch(/status not documented/);
    const leaked = { api_keys: [{ ...keys.api_keys[0], token: 'vak_secret' }] };
    expect(conformance.check('get', '/api/user/api-keys', 200, json, leaked)).toMatch(/additional properties 'token'/);
    const wrongType = { api_keys: [{ ...keys.api_keys[0], id: '1' }] };
    expect(conformance.check('get', '/api/user/api-keys', 200, json, wrongType)).toMatch(/must be integer/);
    expect(conformance.check('delete', '/api/user/api-keys/7', 404, json, { error: 'x' })).toMatch(/does not match/);
    expect(conformance.check('get', '/api/not-a-route', 404, json, { message: 'Not found.' })).toBeUndefined();
    // The voice runtime's routes, against their own document.
    const ingest = '/api/internal/calls/call-1';
    expect(conformance.check('put', ingest, 401, json, { message: 'Unauthenticated.' })).toBeUndefined();
    expect(conformance.check('put', ingest, 418, json, {})).toMatch(/PUT \/api\/internal\/.* status not documented/);
    expect(conformance.check('put', ingest, 401, json, { message: 'x', token: 'y' })).toMatch(/additional properties/);
    // Health is described by neither document.
    expect(conformance.check('get', '/api/health', 200, json, { anything: true })).toBeUndefined();
  });
});
