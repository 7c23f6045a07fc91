import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiExtension,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiPayloadTooLargeResponse,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { CallLimitResponse, ErrorFieldResponse, MessageResponse, ValidationErrorResponse } from '@app/contracts';

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

/**
 * Answers every route can give: a body that cannot be parsed (400) or is too large (413) (bodies are parsed
 * before routing), the rate limit (429), and a dependency (database, queue) that does not answer (503).
 */
const ApiCommonErrors = () =>
  applyDecorators(
    ApiBadRequestResponse({ type: MessageResponse, description: 'The body could not be parsed' }),
    ApiPayloadTooLargeResponse({ type: MessageResponse, description: 'The body is too large' }),
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

/**
 * A controller whose routes need no credentials (with `@Public()`); the document marks them `security: []`.
 */
export const ApiPublicResource = (tag: string) => applyDecorators(ApiTags(tag), ApiCommonErrors());

/** A route that validates its body: invalid fields are 422 in Laravel's validation shape. */
export const ApiValidatedInput = (description = 'The given data was invalid.') =>
  ApiUnprocessableEntityResponse({ type: ValidationErrorResponse, description });

/** A query-only route whose parameters are validated: 422 in the validation shape. */
export const ApiValidatedQuery = () =>
  ApiUnprocessableEntityResponse({ type: ValidationErrorResponse, description: 'A query parameter is invalid' });

/** The resource's 404 in its own shape: `{error}` or `{message}` (see the contract). */
export const ApiNotFoundAs = (shape: 'message' | 'error', text: string) =>
  ApiNotFoundResponse({ type: shape === 'error' ? ErrorFieldResponse : MessageResponse, description: text });

/**
 * A route whose own failure to start its work is 503 `{error}` (the spec's text for it), besides the `{message}`
 * every route answers when a dependency does not answer.
 */
export const ApiUnavailableAs = (text: string) =>
  applyDecorators(
    ApiExtraModels(ErrorFieldResponse, MessageResponse),
    ApiServiceUnavailableResponse({
      description: `${text} (\`{error}\`), or a dependency is unavailable (\`{message}\`); retry later`,
      schema: { oneOf: [{ $ref: getSchemaPath(ErrorFieldResponse) }, { $ref: getSchemaPath(MessageResponse) }] },
    }),
  );

/**
 * A route that starts a call: beyond the account's limit of calls in progress it is 429 with `Retry-After` and the
 * limit (`CallLimitResponse`), besides the rate limit's 429 `{message}` every route may answer.
 */
export const ApiCallLimit = (text: string) =>
  ApiTooManyRequestsResponse({
    type: CallLimitResponse,
    description: `${text} (with \`max_concurrent_calls\`); or Too Many Attempts. (without it)`,
    headers: rateLimitHeaders,
  });

/** The extension that carries per-media-type bodies until the document is assembled (see api-document.ts). */
export const REQUEST_BODIES_EXTENSION = 'x-request-bodies';

/**
 * A request body with a different schema per media type (JSON for websites, multipart for files), which
 * `@ApiBody` cannot express: recorded as an extension and turned into `requestBody.content` when the document
 * is built.
 */
export const ApiBodyPerMediaType = (bodies: Record<string, Type>) =>
  applyDecorators(
    ApiExtraModels(...Object.values(bodies)),
    ApiExtension(
      REQUEST_BODIES_EXTENSION,
      Object.fromEntries(
        Object.entries(bodies).map(([mediaType, model]) => [mediaType, { schema: { $ref: getSchemaPath(model) } }]),
      ),
    ),
  );
