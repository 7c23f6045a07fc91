import type { ToolDefinition, ToolHttpRequest } from './tool-call.types';

/**
 * The endpoint is not a URL once its placeholders are filled (a placeholder in the host, say). The message leaves the
 * endpoint out: filled in, it holds the call's variables and arguments.
 */
export class InvalidToolEndpointError extends Error {
  constructor(readonly endpoint: string) {
    super('The endpoint is not a valid URL once its placeholders are filled');
  }
}

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** A value as it travels in a URL, a form or a header: text as is, anything else as JSON. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `{{variable}}` templates filled from the call's variables; an unknown variable becomes empty. */
function fillVariables(text: string, variables: Record<string, unknown>, encode: (value: string) => string): string {
  return text.replace(VARIABLE, (_match, name: string) => {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    return value === undefined || value === null ? '' : encode(asText(value));
  });
}

/** Header values never carry line breaks or other control characters (tab aside), whatever a variable holds. */
const headerSafe = (value: string) => value.replace(/[\x00-\x08\x0a-\x1f\x7f]+/g, ' ');

/**
 * Builds the request a tool call makes, exactly as the assistant's runtime does:
 * 1. `{{variable}}` templates in the endpoint, header values and static values are filled from `variables`;
 * 2. `{param}` placeholders in the endpoint are filled from the arguments (URL-encoded) and those arguments used up;
 * 3. the remaining arguments, with the static fields merged over them, go to the query string (GET, DELETE) or
 *    the body: JSON, or `application/x-www-form-urlencoded` for `form`.
 */
export function buildToolRequest(
  tool: ToolDefinition,
  values: Record<string, unknown> = {},
  variables: Record<string, unknown> = {},
): ToolHttpRequest {
  // Maps, not objects: a name such as `constructor` or `__proto__` is a name like any other here.
  const fields = new Map(Object.entries(values));
  const withVariables = fillVariables(tool.endpoint, variables, encodeURIComponent);
  const endpoint = withVariables.replace(PLACEHOLDER, (_match, name: string) => {
    const value = fields.get(name);
    fields.delete(name);
    return value === undefined || value === null ? '' : encodeURIComponent(asText(value));
  });
  for (const field of tool.staticFields)
    fields.set(
      field.key,
      fillVariables(field.value, variables, (value) => value),
    );

  const headers: Record<string, string> = {};
  for (const header of tool.headers) {
    headers[header.name] = headerSafe(fillVariables(header.value, variables, (value) => value));
  }

  const method = tool.method.toUpperCase();
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new InvalidToolEndpointError(endpoint);
  }
  let body: string | null = null;
  if (BODY_METHODS.has(method)) {
    if (tool.bodyFormat === 'form') {
      body = new URLSearchParams([...fields].map(([key, value]): [string, string] => [key, asText(value)])).toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    } else {
      body = JSON.stringify(Object.fromEntries(fields));
      headers['Content-Type'] = 'application/json';
    }
  } else {
    for (const [key, value] of fields) url.searchParams.append(key, asText(value));
  }
  return { method, url: url.href, headers, body };
}
