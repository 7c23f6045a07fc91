/** What every call of the client resolves to: the parsed body of a success, or of a failure. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * A failed request: its status and the API's body, in one of the API's three shapes (`{message, errors}` for
 * validation, `{message}`, `{error}`).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;

  constructor(response: Response, body: unknown) {
    super(`${response.status} ${describe(body) ?? response.statusText}`.trim());
    this.name = 'ApiError';
    this.status = response.status;
    this.body = body;
  }
}

/** The body of a successful answer; an `ApiError` for any other. */
export function unwrap<T>(answer: Answer<T>): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  throw new ApiError(answer.response, answer.error);
}

function describe(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const text = 'message' in body ? body.message : 'error' in body ? body.error : undefined;
  return typeof text === 'string' ? text : undefined;
}
