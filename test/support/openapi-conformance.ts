import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Schema = Record<string, any>;
interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
  operation: Schema;
  /** The document that describes the route, whose components its `$ref`s name. */
  document: Schema;
}

/**
 * Checks real responses against the served OpenAPI documents: the status must be documented for the operation,
 * and a JSON body must match its schema with no field the schema does not name. Each response is checked against
 * the document that describes its path (the public one, or the voice runtime's for `/api/internal/`). The e2e stack
 * runs every response of every test through it, so the documents cannot drift from what clients receive.
 */
export class OpenApiConformance {
  private readonly ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Route[];

  constructor(...documents: Schema[]) {
    const templates = documents.flatMap((document) => Object.keys(document.paths));
    const twice = templates.find((template, index) => templates.indexOf(template) !== index);
    if (twice) throw new Error(`${twice} is described by two documents`);
    this.routes = documents
      .flatMap((document) =>
        Object.entries<Schema>(document.paths).flatMap(([template, operations]) =>
          Object.entries<Schema>(operations).map(([method, operation]) => ({
            method,
            template,
            pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
            params: (template.match(/\{/g) ?? []).length,
            operation,
            document,
          })),
        ),
      )
      // A literal segment wins over a parameter (`/phone-numbers/all` before `/phone-numbers/{id}`).
      .sort((a, b) => a.params - b.params);
  }

  /** Returns what is wrong with the response, or undefined when it conforms or the route is not documented. */
  check(
    method: string,
    url: string,
    status: number,
    contentType: string | undefined,
    body: unknown,
  ): string | undefined {
    const path = new URL(url, 'http://localhost').pathname;
    const candidates = this.routes.filter((route) => route.pattern.test(path));
    if (candidates.length === 0) return undefined; // unknown path: 404 from the router, nothing to document
    const route = candidates.find((candidate) => candidate.method === method.toLowerCase());
    if (!route) return undefined; // a method the path does not serve: 405
    const where = `${method.toUpperCase()} ${route.template} -> ${status}`;
    const response = route.operation.responses?.[String(status)] ?? route.operation.responses?.default;
    if (!response)
      return `${where}: status not documented (documented: ${Object.keys(route.operation.responses ?? {}).join(', ')})`;
    if (!contentType?.includes('application/json')) return undefined;
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return `${where}: JSON body ${JSON.stringify(body).slice(0, 200)} but no schema documented`;
    let validate: ValidateFunction;
    try {
      validate = this.validator(`${route.method} ${route.template} ${status}`, route.document, schema);
    } catch (error) {
      return `${where}: the documented schema cannot be compiled: ${(error as Error).message}`;
    }
    if (validate(body)) return undefined;
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map(
        (error) =>
          `${error.instancePath || '(body)'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` '${error.params.additionalProperty}'` : ''}`,
      );
    return `${where}: body does not match the documented schema: ${problems.join('; ')}; body ${JSON.stringify(body).slice(0, 300)}`;
  }

  private validator(key: string, document: Schema, schema: Schema): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      // A schema that contains itself (a tool parameter's nested properties) is kept as a `$ref` into `$defs`,
      // each definition inlined and closed as the root is.
      const recursive = new Set<string>();
      const root: Schema = closeObjects(mergeAllOf(this.dereference(document, schema, new Set(), recursive)));
      const definitions: Schema = {};
      for (let pending = [...recursive]; pending.length; pending = [...recursive].filter((n) => !definitions[n])) {
        for (const name of pending) {
          definitions[name] = closeObjects(
            mergeAllOf(this.dereference(document, document.components.schemas[name], new Set([name]), recursive)),
          );
        }
      }
      validate = this.ajv.compile(recursive.size ? { ...root, $defs: definitions } : root);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private dereference(document: Schema, node: unknown, seen: Set<string>, recursive: Set<string>): any {
    if (Array.isArray(node)) return node.map((item) => this.dereference(document, item, seen, recursive));
    if (!node || typeof node !== 'object') return node;
    const record = node as Schema;
    if (typeof record.$ref === 'string') {
      const name = record.$ref.split('/').pop()!;
      if (seen.has(name)) {
        recursive.add(name);
        return { $ref: `#/$defs/${name}` };
      }
      // Siblings of a `$ref` are ignored, as OpenAPI 3.0 says: the document must not rely on them.
      return this.dereference(document, document.components.schemas[name], new Set([...seen, name]), recursive);
    }
    return Object.fromEntries(
      Object.entries(record).map(([key, value]) => [key, this.dereference(document, value, seen, recursive)]),
    );
  }
}

/** Folds `allOf` object parts into one object so that "no undocumented fields" can be checked on it. */
function mergeAllOf(node: any): any {
  if (Array.isArray(node)) return node.map(mergeAllOf);
  if (!node || typeof node !== 'object') return node;
  const record: Schema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, mergeAllOf(value)]));
  // A part left as a `$ref` (a recursive schema's) is closed in its own definition: nothing to fold.
  if (!Array.isArray(record.allOf) || record.allOf.some((part: Schema) => typeof part.$ref === 'string')) return record;
  const { allOf, ...rest } = record;
  const merged: Schema = {
    ...rest,
    type: 'object',
    properties: { ...(rest.properties ?? {}) },
    required: [...(rest.required ?? [])],
  };
  for (const part of allOf as Schema[]) {
    Object.assign(merged.properties, part.properties ?? {});
    merged.required.push(...(part.required ?? []));
    for (const [key, value] of Object.entries(part)) {
      if (!['properties', 'required', 'type'].includes(key) && merged[key] === undefined) merged[key] = value;
    }
  }
  return merged;
}

/**
 * Objects with named properties and no stated `additionalProperties` may hold nothing else. `nullable` is left to
 * Ajv, which reads it as OpenAPI 3.0 does: it adds null to the `type` beside it, and nothing else (an `enum` must
 * list null itself), so the document is checked as a client's validator would read it.
 */
function closeObjects(node: any): any {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (!node || typeof node !== 'object') return node;
  const record: Schema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closeObjects(value)]));
  if (record.properties && record.additionalProperties === undefined) record.additionalProperties = false;
  return record;
}
