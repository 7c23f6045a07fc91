import { CallHandler, ExecutionContext, Injectable, NestInterceptor, Type } from '@nestjs/common';
import { catchError, Observable, throwError } from 'rxjs';
import { ValidationFailed } from '@app/contracts';

/**
 * Routes whose validation failures carry a fixed summary instead of Laravel's first-message one (tool create and
 * update answer `"message": "Validation failed"`, as the public product does). The field messages are unchanged.
 */
export function ValidationMessage(message: string): Type<NestInterceptor> {
  @Injectable()
  class FixedValidationMessage implements NestInterceptor {
    intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
      return next
        .handle()
        .pipe(
          catchError((error: unknown) =>
            throwError(() => (error instanceof ValidationFailed ? new ValidationFailed(error.errors, message) : error)),
          ),
        );
    }
  }
  return FixedValidationMessage;
}
