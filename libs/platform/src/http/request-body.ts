import { TextDecoder } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'qs';
import getRawBody from 'raw-body';
import { type DomainError, Errors, MAX_INPUT_DEPTH } from '@app/contracts';

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

type BodyParser = (request: IncomingMessage, raw: Buffer) => unknown;

/** The parser of a request's media type; multipart is read by FileUploadInterceptor on the routes that take a file. */
function parserOf(request: IncomingMessage): BodyParser | undefined {
  const type = request.headers['content-type'];
  if (!type) return undefined;
  if (/^application\/json\s*(?:;|$)/i.test(type)) return parseJson;
  if (/^application\/x-www-form-urlencoded\s*(?:;|$)/i.test(type)) return parseForm;
  return undefined;
}

/**
 * The body parser of an app: JSON and form-encoded bodies up to BODY_LIMIT_BYTES (gzip, deflate or br compressed
 * or not), read with `raw-body` as Express's own parsers read them. Any other media type (multipart included) and
 * the body of a GET or HEAD are left unread, so that validation names what is missing (as Laravel does) rather than the media type.
 *
 * Unlike Express's `body-parser`, which reads a refused body to its end before answering, a body declared or found
 * to be over the limit is answered at once and never read further: the answer closes the connection (see
 * HttpErrorFilter), so a client cannot make the server read a gigabyte it has already refused.
 */
export function bodyParser(): (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void {
  return (request, _response, next) => {
    // A GET or HEAD takes no body (RFC 9110 section 9.3.1): one sent anyway is left unread, never refused.
    if (request.method === 'GET' || request.method === 'HEAD') return next();
    const parse = parserOf(request);
    const length = request.headers['content-length'];
    if (!parse || (length === undefined ? request.headers['transfer-encoding'] === undefined : length === '0'))
      return next();
    getRawBody(request, { length, limit: BODY_LIMIT_BYTES }, (error, raw) => {
      if (error) return next(readRefusal(error));
      try {
        (request as IncomingMessage & { body?: unknown }).body = parse(request, raw);
        next();
      } catch (refusal) {
        next(refusal);
      }
    });
  };
}

/** What `raw-body` refused, as the coded error the exception filter answers. */
function readRefusal(error: { type?: string }): DomainError {
  if (error.type === 'entity.too.large') return Errors.payloadTooLarge();
  // A Content-Length that the body does not match, or a body the client stopped sending.
  return Errors.unreadableBody();
}

function parseJson(request: IncomingMessage, raw: Buffer): unknown {
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

function parseForm(request: IncomingMessage, raw: Buffer): unknown {
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

function charsetOf(request: IncomingMessage): string | undefined {
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
function decompress(request: IncomingMessage, body: Buffer): Buffer {
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
