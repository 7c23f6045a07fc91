import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import multer, { MulterError } from 'multer';
import { Observable } from 'rxjs';
import { AppConfig } from '@app/config';
import { DomainError, MAX_DOCUMENT_FILE_BYTES, UploadedDocumentFile, ValidationFailed } from '@app/contracts';

const FILE_UPLOAD_ROUTE = 'http:fileUpload';

/** Marks a route whose multipart body carries one file in the `file` field (parsed by FileUploadInterceptor). */
export const FileUpload = () => SetMetadata(FILE_UPLOAD_ROUTE, true);

/** What a multipart body may carry besides its file: the boundaries, headers and fields. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;
/** When a refused upload should try again: uploads in flight finish in about a second. */
const RETRY_AFTER_SECONDS = 2;

const uploadsBusy = () =>
  new DomainError(
    'uploads_busy',
    503,
    { message: 'Too many uploads are in progress. Please try again shortly.' },
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );

/**
 * The bytes of uploads this process holds. An upload is buffered whole on its way to Postgres, so without a bound
 * many at once would take the process's memory with them; each reserves what its body may hold (its Content-Length,
 * or the most a file may be) before a byte is read, and gives it back when its answer is sent.
 */
class UploadBudget {
  private reserved = 0;

  constructor(private readonly limit: number) {}

  /** A release function, or undefined when taking `bytes` would pass the budget. */
  take(bytes: number): (() => void) | undefined {
    if (this.reserved + bytes > this.limit) return undefined;
    this.reserved += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= bytes;
    };
  }
}

/** The 20 MB limit is enforced while streaming: past it multer stops buffering and discards the rest. */
const upload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_DOCUMENT_FILE_BYTES, files: 1, fields: 200, fieldSize: 64 * 1024, parts: 210 },
}).single('file');

function uploadError(error: unknown): DomainError {
  if (error instanceof MulterError) {
    switch (error.code) {
      case 'LIMIT_FILE_SIZE':
        return ValidationFailed.field(
          'file',
          `The file field must not be greater than ${MAX_DOCUMENT_FILE_BYTES / 1024} kilobytes.`,
        );
      // As Laravel sees it: a file under another name leaves `file` missing; two files make `file` a list.
      case 'LIMIT_UNEXPECTED_FILE':
        return error.field === 'file'
          ? ValidationFailed.field('file', 'The file field must be a file.')
          : ValidationFailed.field('file', 'The file field is required.');
      case 'LIMIT_FILE_COUNT':
        return ValidationFailed.field('file', 'The file field must be a file.');
      default:
        return ValidationFailed.field(error.field || 'file', 'The upload is too large or malformed.');
    }
  }
  return new DomainError('malformed_multipart', 400, { message: 'The multipart body is malformed.' });
}

/**
 * Parses multipart uploads of routes marked `@FileUpload()` and hands the file to validation as `body.file` (a
 * `file` field sent in JSON is ignored); a file over the limit is the validation shape on `file`. A global
 * interceptor registered first rather than a route one, so that what runs after it (the Idempotency-Key check)
 * sees the parsed fields and file.
 */
@Injectable()
export class FileUploadInterceptor implements NestInterceptor {
  private readonly budget: UploadBudget;

  constructor(
    private readonly reflector: Reflector,
    config: AppConfig,
  ) {
    this.budget = new UploadBudget(config.uploadBudgetBytes);
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (!this.reflector.get<boolean>(FILE_UPLOAD_ROUTE, context.getHandler())) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (request.is('multipart/form-data')) {
      const response = http.getResponse<Response>();
      const most = MAX_DOCUMENT_FILE_BYTES + MULTIPART_OVERHEAD_BYTES;
      const declared = Number(request.headers['content-length']);
      const release = this.budget.take(
        Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, most) : most,
      );
      if (!release) throw uploadsBusy();
      // Held until the answer is sent (or the client goes away): the buffer lives as long as the request does.
      response.once('close', release);
      await new Promise<void>((resolve, reject) =>
        upload(request, response, (error: unknown) => (error ? reject(uploadError(error)) : resolve())),
      );
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body === 'object' && !Array.isArray(body)) {
      const file: UploadedDocumentFile | undefined = request.file
        ? { originalName: request.file.originalname, size: request.file.size, buffer: request.file.buffer }
        : undefined;
      body.file = file;
      request.body = body;
    }
    return next.handle();
  }
}
