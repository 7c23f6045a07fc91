import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiPayloadTooLargeResponse,
  ApiResponse,
  ApiSecurity,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { ErrorFieldResponse, MessageResponse, ValidationErrorResponse } from '@app/contracts';

/**
 * OpenAPI decorators for the errors every route really answers, so the served document lists what a client
 * can receive and in which of the spec's three shapes. Use them instead of hand-written error responses.
 */

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } };
const rateLimitHeaders = {
  ...retryAfter,
  'X-RateLimit-Limit': { description: 'Requests allowed per minute', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in this minute', schema: { type: 'integer' } },
};

/** Answers every route can give: the rate limit, and a dependency (database, queue) that does not answer. */
const ApiCommonErrors = () =>
  applyDecorators(
    ApiTooManyRequestsResponse({ type: MessageResponse, description: 'Too Many Attempts.', headers: rateLimitHeaders }),
    ApiServiceUnavailableResponse({ type: MessageResponse, description: 'A dependency is unavailable; retry later' }),
    ApiResponse({ status: 500, type: MessageResponse, description: 'Server Error.' }),
  );

/** A controller of the authenticated user's resources: bearer security, 401, 429, 500, 503 on every route. */
export const ApiUserResource = (tag: string) =>
  applyDecorators(
    ApiTags(tag),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ type: MessageResponse, description: 'Unauthenticated.' }),
    ApiCommonErrors(),
  );

/** A route that needs no credentials (it also needs `@Public()`). */
export const ApiPublicRoute = () => applyDecorators(ApiSecurity({}), ApiCommonErrors());

/**
 * A route that takes a JSON (or form) body or validated query: a body that cannot be parsed is 400, one over
 * the size limit 413, and invalid fields 422 in Laravel's validation shape.
 */
export const ApiValidatedInput = (description = 'The given data was invalid.') =>
  applyDecorators(
    ApiBadRequestResponse({ type: MessageResponse, description: 'The body could not be parsed' }),
    ApiPayloadTooLargeResponse({ type: MessageResponse, description: 'The body is too large' }),
    ApiUnprocessableEntityResponse({ type: ValidationErrorResponse, description }),
  );

/** A query-only route whose parameters are validated: 422 in the validation shape. */
export const ApiValidatedQuery = () =>
  ApiUnprocessableEntityResponse({ type: ValidationErrorResponse, description: 'A query parameter is invalid' });

/** The resource's 404 in its own shape: `{error}` or `{message}` (see the contract). */
export const ApiNotFoundAs = (shape: 'message' | 'error', text: string) =>
  ApiNotFoundResponse({ type: shape === 'error' ? ErrorFieldResponse : MessageResponse, description: text });
