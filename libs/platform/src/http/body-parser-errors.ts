import type { NextFunction, Request, Response } from 'express';
import { DomainError, Errors, MAX_INPUT_DEPTH } from '@app/contracts';

/**
 * Express error middleware placed right after the body parsers: turns their failures (bad JSON, too large,
 * too deep, too many parameters, broken compression, unknown charset) into coded errors, so the exception
 * filter answers them in the spec's shapes instead of echoing the parser's own message.
 */
export function translateBodyParserErrors(error: unknown, _request: Request, _response: Response, next: NextFunction) {
  next(bodyParserError(error) ?? error);
}

function bodyParserError(error: unknown): DomainError | undefined {
  const failure = error as { type?: string; status?: number } | undefined;
  switch (failure?.type) {
    case 'entity.parse.failed':
      return Errors.malformedJson();
    case 'entity.too.large':
      return Errors.payloadTooLarge();
    case 'entity.too.deep':
    case 'querystring.parse.rangeError':
      return Errors.bodyTooDeep();
    case 'parameters.too.many':
      return Errors.tooManyParameters();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return Errors.unsupportedMediaType();
    case 'request.aborted':
      return Errors.malformedJson();
  }
  // Any other client error of a parser: a body that cannot be read (for example gzip that is not gzip).
  const status = failure?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return Errors.unreadableBody();
  return undefined;
}

/**
 * The body parser's `verify` hook: refuses a JSON body nested deeper than any request needs before it is
 * parsed, so neither the parser nor the DTO transformation has to walk it. One pass over the bytes, no
 * allocation; brackets inside strings do not count.
 */
export function refuseDeepJson(_request: unknown, _response: unknown, body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === 0x5c /* \ */) index++;
      else if (byte === 0x22 /* " */) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x7b /* { */ || byte === 0x5b /* [ */) {
      if (++depth > MAX_INPUT_DEPTH)
        throw Object.assign(new Error('JSON nested too deeply'), { type: 'entity.too.deep' });
    } else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) {
      depth--;
    }
  }
}
