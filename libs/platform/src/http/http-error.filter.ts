import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express, Request, Response } from 'express';
import { DomainError, Errors, humaniseAttribute, ValidationFailed } from '@app/contracts';
import { allowedMethods } from './allowed-methods';
import { answerUnreadRequest } from './unread-body';

/** Connection-level failures of Postgres or Redis, as opposed to bugs: worth a 503 the caller can retry. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
// Postgres: admin shutdown, cannot connect now, connection exceptions.
const POSTGRES_UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08006']);

function isDependencyUnavailable(exception: unknown): boolean {
  const error = exception as { code?: string; name?: string; message?: string; driverError?: { code?: string } };
  if (!error || typeof error !== 'object') return false;
  const code = error.driverError?.code ?? error.code;
  if (code && (CONNECTION_ERROR_CODES.has(code) || POSTGRES_UNAVAILABLE_CODES.has(code))) return true;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  // The last three: a Redis command, a Postgres statement, and a wait for a Postgres connection that got no answer
  // within their bounds (a server that hangs rather than refuses).
  return /Connection terminated|Connection is closed|enableOfflineQueue|Stream isn't writeable|Command timed out|Query read timeout|timeout exceeded when trying to connect/i.test(
    error.message ?? '',
  );
}

/**
 * Postgres refusals that the caller's input or a concurrent request caused, should a route's own checks have
 * let one through: never a 500. A reference to a missing row (a concurrent delete won) is Laravel's `exists`
 * failure on the column Postgres names; a value a column cannot hold is a validation failure; a deadlock or
 * serialisation victim that its route did not retry is a conflict the caller may retry.
 */
function databaseClientError(exception: unknown): DomainError | undefined {
  const error = exception as { name?: string; driverError?: { code?: string; detail?: string } };
  if (error?.name !== 'QueryFailedError' || !error.driverError?.code) return undefined;
  const { code, detail = '' } = error.driverError;
  if (code === '23503') {
    const missing = /^Key \(([a-z_]+)\)=\(.*\) is not present in table/.exec(detail);
    if (missing) return ValidationFailed.field(missing[1], `The selected ${humaniseAttribute(missing[1])} is invalid.`);
    return Errors.conflict();
  }
  if (code.startsWith('22')) return new DomainError('invalid_data', 422, { message: 'The given data was invalid.' });
  if (code === '40P01' || code === '40001' || code === '55P03') return Errors.conflict();
  return undefined;
}

/**
 * The one place errors become responses. Every body is one of the spec's three shapes; stack traces and
 * internal messages are logged, never sent.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    let error = this.toDomainError(exception);
    // Only a request no route took can be a wrong method; a route's own "not found" (an id it could never hold)
    // stays 404 though the path has methods.
    if (error.code === 'route_not_found' && !(exception instanceof DomainError))
      error = this.wrongMethod(host.switchToHttp().getRequest<Request>()) ?? error;
    if (error.status >= 500) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    if (response.headersSent) return;
    for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
    // A route's own media type (`@Header('Content-Type', 'text/csv')`) is set before its handler runs; the error
    // body is JSON whatever the route answers on success.
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    // A refusal sent before the request's body was read (too large, over the upload budget, unauthenticated, rate
    // limited, multipart where none is taken) ends the connection once the rest of that body is thrown away.
    if (response.req && !response.req.complete)
      return answerUnreadRequest(response, error.status, JSON.stringify(error.body));
    response.status(error.status).json(error.body);
  }

  /** A path that exists under other methods answers 405 with `Allow`, not 404. */
  private wrongMethod(request: Request | undefined): DomainError | undefined {
    const app = this.adapterHost?.httpAdapter?.getInstance<Express>();
    if (!app || !request?.path) return undefined;
    const allowed = allowedMethods(app, request.path);
    return allowed.length > 0 ? Errors.methodNotAllowed(allowed) : undefined;
  }

  private toDomainError(exception: unknown): DomainError {
    if (exception instanceof DomainError) return exception;

    if (exception instanceof HttpException) {
      switch (exception.getStatus()) {
        case HttpStatus.NOT_FOUND:
          return Errors.routeNotFound();
        case HttpStatus.PAYLOAD_TOO_LARGE:
          return Errors.payloadTooLarge();
        case HttpStatus.UNSUPPORTED_MEDIA_TYPE:
          return Errors.unsupportedMediaType();
        case HttpStatus.UNAUTHORIZED:
          return Errors.unauthenticated();
        case HttpStatus.BAD_REQUEST:
          // Nest maps a path with broken percent-encoding to a 400 whose message quotes the input.
          return Errors.malformedRequest();
        default: {
          const status = exception.getStatus();
          if (status < 500) return new DomainError('http_error', status, { message: exception.message });
        }
      }
    }
    if (isDependencyUnavailable(exception)) return Errors.serviceUnavailable();
    const refused = databaseClientError(exception);
    if (!refused) return Errors.serverError();
    // A 4xx for the caller, but a sign that a route's own checks or locks missed a case.
    this.logger.warn(`Postgres refused a request: ${(exception as Error).message}`);
    return refused;
  }
}
