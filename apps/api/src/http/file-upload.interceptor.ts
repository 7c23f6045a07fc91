import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import multer, { MulterError } from 'multer';
import { Observable } from 'rxjs';
import { DomainError, MAX_DOCUMENT_FILE_BYTES, UploadedDocumentFile, ValidationFailed } from '@app/contracts';

const FILE_UPLOAD_ROUTE = 'http:fileUpload';

/** Marks a route whose multipart body carries one file in the `file` field (parsed by FileUploadInterceptor). */
export const FileUpload = () => SetMetadata(FILE_UPLOAD_ROUTE, true);

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

/** The Node request as multer leaves it: the form's fields in `body`, the one file in `file`. */
type MultipartRequest = IncomingMessage & { body?: Record<string, unknown>; file?: Express.Multer.File };

const isMultipart = (request: FastifyRequest) =>
  /^multipart\/form-data\s*(;|$)/i.test(request.headers['content-type'] ?? '');

/**
 * Parses multipart uploads of routes marked `@FileUpload()` and hands the file to validation as `body.file` (a
 * `file` field sent in JSON is ignored); a file over the limit is the validation shape on `file`. Fastify leaves
 * multipart bodies unread (see the body parsers), so multer streams the Node request itself, with its limits.
 * Registered first on POST routes, so that what runs after it (the Idempotency-Key check) sees the parsed fields
 * and file.
 */
@Injectable()
export class FileUploadInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (!this.reflector.get<boolean>(FILE_UPLOAD_ROUTE, context.getHandler())) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    let uploaded: Express.Multer.File | undefined;
    if (isMultipart(request)) {
      const raw = request.raw as MultipartRequest;
      await new Promise<void>((resolve, reject) =>
        upload(raw as never, http.getResponse<FastifyReply>().raw as never, (error: unknown) =>
          error ? reject(uploadError(error)) : resolve(),
        ),
      );
      request.body = raw.body;
      uploaded = raw.file;
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body === 'object' && !Array.isArray(body)) {
      const file: UploadedDocumentFile | undefined = uploaded
        ? { originalName: uploaded.originalname, size: uploaded.size, buffer: uploaded.buffer }
        : undefined;
      body.file = file;
      request.body = body;
    }
    return next.handle();
  }
}
