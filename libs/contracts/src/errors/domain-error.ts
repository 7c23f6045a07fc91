/** The three body shapes the spec allows for errors. */
export type ValidationErrorBody = { message: string; errors: Record<string, string[]> };
export type MessageErrorBody = { message: string };
export type ErrorFieldBody = { error: string };
/** `{message}` with what the runtime acts on: a session the owner's ring-time hook refused (403). */
export type RejectedCallBody = MessageErrorBody & { reject: { message: string | null } };
/** `{message}` with the limit a new call ran into: the account has as many calls in progress as it may (429). */
export type CallLimitBody = MessageErrorBody & { max_concurrent_calls: number };
export type ErrorBody = ValidationErrorBody | MessageErrorBody | RejectedCallBody | CallLimitBody | ErrorFieldBody;

/**
 * An error the service means to show the caller. It carries its status and the exact body to render, so one
 * exception filter can answer every route in the spec's shapes.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super('message' in body ? body.message : body.error);
    this.name = 'DomainError';
  }
}

/** Laravel's summary line: the first message, then how many more there are. */
export function validationSummary(errors: Record<string, string[]>): string {
  const messages = Object.values(errors).flat();
  const more = messages.length - 1;
  if (more <= 0) return messages[0] ?? 'The given data was invalid.';
  return `${messages[0]} (and ${more} more ${more === 1 ? 'error' : 'errors'})`;
}

export class ValidationFailed extends DomainError {
  constructor(
    readonly errors: Record<string, string[]>,
    message = validationSummary(errors),
  ) {
    super('validation_failed', 422, { message, errors });
  }

  /** One field, one message: the common case for checks made outside the DTO (uniqueness, credentials). */
  static field(field: string, message: string): ValidationFailed {
    return new ValidationFailed({ [field]: [message] });
  }
}

/** Which body a resource's routes use for "not found" (the spec differs per resource). */
export type NotFoundShape = 'message' | 'error';

export class NotFound extends DomainError {
  constructor(resource: string, shape: NotFoundShape = 'message', text = `${resource} not found.`) {
    super('not_found', 404, shape === 'error' ? { error: text } : { message: text });
  }
}
