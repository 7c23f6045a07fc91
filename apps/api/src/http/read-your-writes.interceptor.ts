import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, concatMap, from, map, Observable, throwError } from 'rxjs';
import { ReadReplicas, RequestReads } from '@app/database';
import type { AuthenticatedRequest } from '../auth/auth-context';

const READ_ONLY_METHODS = new Set(['GET', 'HEAD']);

/**
 * Lets a read-only request read its account's data from a replica; after a request that may have written, keeps the
 * primary's WAL position for the account before the answer leaves, so the account's next read (through any API
 * process) finds its own write. A failed write is recorded too: it may have written part of its work.
 */
@Injectable()
export class ReadYourWritesInterceptor implements NestInterceptor {
  constructor(private readonly replicas: ReadReplicas) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.replicas.configured || context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const readOnly = READ_ONLY_METHODS.has(request.method);
    // The handler runs when subscribed: subscribing inside the scope carries it through the handler's awaits.
    return new Observable<unknown>((subscriber) => {
      const subscription = this.replicas.runRequest(readOnly, (reads) =>
        (readOnly ? next.handle() : next.handle().pipe(this.recordingWrites(request, reads))).subscribe(subscriber),
      );
      return () => subscription.unsubscribe();
    });
  }

  private recordingWrites(request: AuthenticatedRequest, reads: RequestReads) {
    const record = () => {
      const accounts = new Set(reads.written);
      if (request.auth) accounts.add(request.auth.user.id);
      return from(Promise.all([...accounts].map((id) => this.replicas.recordWrite(id))));
    };
    return (handled: Observable<unknown>) =>
      handled.pipe(
        concatMap((value) => record().pipe(map(() => value))),
        catchError((error: unknown) => record().pipe(concatMap(() => throwError(() => error)))),
      );
  }
}
