import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService } from '@nestjs/core';
import { Stack, startStack } from './support/stack';

describe('OpenAPI document', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(() => stack.close());

  it('serves Swagger UI and the JSON document', async () => {
    const ui = await stack.http.get('/api/docs').expect(200);
    expect(ui.text).toContain('swagger');
    const json = await stack.http.get('/api/docs-json').expect(200);
    expect(json.body.openapi).toMatch(/^3\./);
  });

  it('lists every route of the API with a response schema, and request schemas for bodies', async () => {
    const document = (await stack.http.get('/api/docs-json').expect(200)).body;
    const routes = stack.api
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
    expect(routes.length).toBeGreaterThan(8);
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method];
      expect({ route, documented: Boolean(operation) }).toEqual({ route, documented: true });
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
      expect({ route, hasSuccessResponse: Boolean(success) }).toEqual({ route, hasSuccessResponse: true });
    }

    const createKey = document.paths['/api/user/api-keys'].post;
    expect(createKey.requestBody.content['application/json'].schema.$ref).toMatch(/CreateApiKeyRequest$/);
    expect(createKey.responses['201'].content['application/json'].schema.$ref).toMatch(/CreateApiKeyResponse$/);
    expect(document.components.schemas.CreateApiKeyRequest.required).toEqual(['name']);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
