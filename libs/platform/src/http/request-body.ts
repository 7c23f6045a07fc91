import { TextDecoder } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse as parseQueryString } from 'qs';
import { DomainError, Errors, MAX_INPUT_DEPTH } from '@app/contracts';

/** Largest JSON or form body accepted, after decompression; file uploads have their own limit. */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** Most fields a form-encoded body may carry, as PHP's `max_input_vars`. */
const FORM_PARAMETER_LIMIT = 1000;

const DECOMPRESSORS: Record<string, ((body: Buffer, options: { maxOutputLength: number }) => Buffer) | undefined> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * The body parsers of an app: JSON and form-encoded bodies up to BODY_LIMIT_BYTES (gzip, deflate or br
 * compressed or not), multipart left unread for the upload interceptor, and any other media type read as no body
 * at all, so that validation names what is missing (as Laravel does) rather than the media type.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  for (const [mediaType, parse] of [
    ['application/json', parseJson],
    ['application/x-www-form-urlencoded', parseForm],
  ] as const) {
    app.addContentTypeParser(mediaType, { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
      try {
        done(null, parse(request, body as Buffer));
      } catch (error) {
        done(error as Error);
      }
    });
  }
  // Read by FileUploadInterceptor on the routes that take a file; elsewhere the stream is discarded unread.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
}

function parseJson(request: FastifyRequest, raw: Buffer): unknown {
  // JSON is UTF-8, -16 or -32 (RFC 7159 section 8.1); what TextDecoder cannot read (UTF-32) is refused too.
  const decoder = textDecoder(charsetOf(request) ?? 'utf-8');
  if (!decoder) throw Errors.unsupportedMediaType();
  const body = decompress(request, raw);
  refuseDeepJson(body);
  const text = decoder.decode(body);
  if (text.trim() === '') return {};
  // Only an object or an array is a request body; a bare string or number is malformed.
  if (!/^\s*[{[]/.test(text)) throw Errors.malformedJson();
  try {
    return JSON.parse(text);
  } catch {
    throw Errors.malformedJson();
  }
}

function parseForm(request: FastifyRequest, raw: Buffer): unknown {
  const charset = charsetOf(request) ?? 'utf-8';
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') throw Errors.unsupportedMediaType();
  const text = decompress(request, raw).toString(charset === 'utf-8' ? 'utf8' : 'latin1');
  if (text === '') return {};
  // Counted before parsing, so a body of a million empty fields is refused without building them.
  let fields = 1;
  for (let index = text.indexOf('&'); index !== -1; index = text.indexOf('&', index + 1)) {
    if (++fields > FORM_PARAMETER_LIMIT) throw Errors.tooManyParameters();
  }
  try {
    return parseQueryString(text, {
      // A field named like a method of Object (`hasOwnProperty`) is kept as a field; qs drops `__proto__` keys.
      allowPrototypes: true,
      arrayLimit: Math.max(100, fields),
      depth: MAX_INPUT_DEPTH,
      strictDepth: true,
      parameterLimit: FORM_PARAMETER_LIMIT,
      charset,
    });
  } catch {
    throw Errors.bodyTooDeep();
  }
}

function charsetOf(request: FastifyRequest): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '');
  return match?.[1].toLowerCase();
}

function textDecoder(charset: string): TextDecoder | undefined {
  if (!charset.startsWith('utf-')) return undefined;
  try {
    return new TextDecoder(charset);
  } catch {
    return undefined;
  }
}

/** The body as sent, inflated per its Content-Encoding, never beyond BODY_LIMIT_BYTES. */
function decompress(request: FastifyRequest, body: Buffer): Buffer {
  const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return body;
  const inflate = DECOMPRESSORS[encoding];
  if (!inflate) throw Errors.unsupportedMediaType();
  try {
    return inflate(body, { maxOutputLength: BODY_LIMIT_BYTES });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw Errors.payloadTooLarge();
    throw Errors.unreadableBody();
  }
}

/**
 * Refuses a JSON body nested deeper than any request needs before it is parsed, so neither the parser nor the
 * DTO transformation has to walk it. One pass over the bytes, no allocation; brackets inside strings do not count.
 */
export function refuseDeepJson(body: Buffer): void {
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
      if (++depth > MAX_INPUT_DEPTH) throw Errors.bodyTooDeep();
    } else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) {
      depth--;
    }
  }
}

/**
 * Fastify's own refusals of a request before it reaches a route (body too large, a Content-Length that does not
 * match the body, a URL that cannot be decoded) as coded errors, so the exception filter answers them in the
 * spec's shapes instead of echoing Fastify's message.
 */
export function requestRefusal(error: unknown): DomainError | undefined {
  const failure = error as { code?: string; statusCode?: number } | undefined;
  if (typeof failure?.code !== 'string' || !failure.code.startsWith('FST_')) return undefined;
  switch (failure.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return Errors.unreadableBody();
  }
  const status = failure.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return Errors.malformedRequest();
  return undefined;
}
