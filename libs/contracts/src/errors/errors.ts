import { DomainError, NotFound } from './domain-error';

/** How long a call refused for the account's limit is asked to wait before it is tried again. */
export const CALL_LIMIT_RETRY_AFTER_SECONDS = 5;

/** Every coded error a route can answer with, in one place so texts stay consistent. */
export const Errors = {
  unauthenticated: () => new DomainError('unauthenticated', 401, { message: 'Unauthenticated.' }),
  /** Without a delay, the caller (the rate-limit guard) has set `Retry-After` itself. */
  tooManyAttempts: (retryAfterSeconds?: number) =>
    new DomainError(
      'too_many_attempts',
      429,
      { message: 'Too Many Attempts.' },
      retryAfterSeconds === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    ),
  registrationClosed: () => new DomainError('registration_closed', 403, { message: 'Registration is disabled.' }),
  apiKeyNotFound: () => new NotFound('API key'),
  knowledgebaseNotFound: () => new NotFound('Knowledgebase', 'error'),
  documentNotFound: () => new NotFound('Document', 'error'),
  folderNotFound: () => new NotFound('Folder'),
  labelNotFound: () => new NotFound('Label'),
  assistantNotFound: () => new NotFound('Assistant'),
  campaignNotFound: () => new NotFound('Campaign'),
  leadNotFound: () => new NotFound('Lead'),
  leadImportNotFound: () => new NotFound('Lead import'),
  callNotFound: () => new NotFound('Call'),
  sipTrunkNotFound: () => new NotFound('SIP trunk', 'error'),
  phoneNumberNotFound: () => new NotFound('Phone number', 'error'),
  /** Without a period, as the public product answers (compat). */
  toolNotFound: () => new NotFound('Tool', 'message', 'Tool not found'),
  /** A job could not be enqueued: nothing was kept, the caller may simply retry. */
  processingNotStarted: () =>
    new DomainError('enqueue_failed', 503, { error: 'Could not start processing the document. Please try again.' }),
  /** A request whose URL or framing cannot be read (broken percent-encoding, a Content-Length that lies). */
  malformedRequest: () => new DomainError('bad_request', 400, { message: 'The request is malformed.' }),
  routeNotFound: () => new DomainError('route_not_found', 404, { message: 'Not found.' }),
  malformedJson: () => new DomainError('malformed_json', 400, { message: 'The request body is not valid JSON.' }),
  bodyNotObject: () => new DomainError('body_not_object', 400, { message: 'The request body must be a JSON object.' }),
  bodyTooDeep: () => new DomainError('body_too_deep', 400, { message: 'The request body is nested too deeply.' }),
  tooManyParameters: () =>
    new DomainError('too_many_parameters', 413, { message: 'The request body has too many parameters.' }),
  unreadableBody: () =>
    new DomainError('unreadable_body', 400, { message: 'The request body could not be read (check its encoding).' }),
  methodNotAllowed: (allowed: string[]) =>
    new DomainError(
      'method_not_allowed',
      405,
      { message: 'The method is not supported for this route.' },
      { Allow: allowed.join(', ') },
    ),
  payloadTooLarge: () => new DomainError('payload_too_large', 413, { message: 'The request body is too large.' }),
  unsupportedMediaType: () => new DomainError('unsupported_media_type', 415, { message: 'Unsupported content type.' }),
  /** A concurrent request changed what this one relied on; nothing was changed, the caller may simply retry. */
  /** The voice runtime named an assistant of another account for a call already recorded. */
  callOfAnotherAccount: () =>
    new DomainError('call_account_conflict', 409, {
      message: 'The call belongs to another account; it cannot be moved to this assistant.',
    }),
  /** The owner's ring-time hook refused an inbound call: the runtime says `message` (if any) and hangs up. */
  callRejected: (message: string | null) =>
    new DomainError('call_rejected', 403, { message: 'The owner’s server refused the call.', reject: { message } }),
  /**
   * A new call (`make_call`, a web call, an inbound session) beyond the account's limit of calls in progress. Calls last minutes,
   * not milliseconds: `Retry-After` asks for a pause before trying again, not a promise that a slot is free by then.
   */
  callLimitReached: (maxConcurrentCalls: number) =>
    new DomainError(
      'call_limit_reached',
      429,
      {
        message: `The account has reached its limit of ${maxConcurrentCalls} calls in progress at once; try again when one ends.`,
        max_concurrent_calls: maxConcurrentCalls,
      },
      { 'Retry-After': String(CALL_LIMIT_RETRY_AFTER_SECONDS) },
    ),
  /** The telephony provider failed a call operation (a transfer, a web call's room): its words stay in the logs. */
  telephonyFailed: (message: string) => new DomainError('telephony_failed', 502, { message }),
  /** The owner's live control or view of a call that has already ended. */
  callFinished: () => new DomainError('call_finished', 409, { message: 'The call has already ended.' }),
  /** More live streams of the account's calls open on one API process than it allows. */
  tooManyStreams: (limit: number) =>
    new DomainError(
      'too_many_streams',
      429,
      { message: `The account already has ${limit} live streams open; close one first.` },
      { 'Retry-After': '5' },
    ),
  conflict: () =>
    new DomainError('conflict', 409, { message: 'The request conflicted with a concurrent change. Please try again.' }),
  serverError: () => new DomainError('server_error', 500, { message: 'Server Error.' }),
  /** A dependency (database, Redis) does not answer; nothing was changed. */
  serviceUnavailable: (retryAfterSeconds?: number) =>
    new DomainError(
      'service_unavailable',
      503,
      { message: 'Service temporarily unavailable. Please try again.' },
      retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) },
    ),
};
