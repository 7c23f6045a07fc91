import type { NextFunction, Request, Response } from 'express';
import { DomainError, Errors } from '@app/contracts';

/**
 * Express error middleware placed right after the body parsers: turns their failures (bad JSON, too large,
 * unknown charset) into coded errors, so the exception filter answers them in the spec's shapes instead of
 * echoing the parser's own message.
 */
export function translateBodyParserErrors(error: unknown, _request: Request, _response: Response, next: NextFunction) {
  next(bodyParserError(error) ?? error);
}

function bodyParserError(error: unknown): DomainError | undefined {
  switch ((error as { type?: string } | undefined)?.type) {
    case 'entity.parse.failed':
      return Errors.malformedJson();
    case 'entity.too.large':
      return Errors.payloadTooLarge();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return Errors.unsupportedMediaType();
    case 'request.aborted':
      return Errors.malformedJson();
    default:
      return undefined;
  }
}
