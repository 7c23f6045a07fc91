import { type OutboundHttpClient, OutboundRequestError } from '@app/outbound-http';
import { buildToolRequest, InvalidToolEndpointError } from './tool-request.builder';
import type { ToolCallError, ToolCallResult, ToolDefinition } from './tool-call.types';

/** How tool calls introduce themselves to the user's endpoint. */
export const TOOL_USER_AGENT = 'VoiceAssistantTools/1.0';

/** The most of a tool's answer that is kept (and shown, and given to the assistant). */
export const TOOL_RESPONSE_MAX_BYTES = 64 * 1024;
/** Redirects are followed as a browser would, each hop checked against the address policy. */
const MAX_REDIRECTS = 5;

/**
 * Calls a tool as an assistant does during a call, through the guarded client (no private, loopback or
 * metadata address in any encoding, redirects re-checked), within the tool's timeout. What the owner set (headers,
 * static fields) is for the endpoint's origin alone: a redirect elsewhere gets none of its headers, and one that
 * would carry the body there (307, 308) is refused. Every failure to get an answer is reported in the result, never
 * thrown: the caller shows it, and the assistant carries on.
 */
export class ToolExecutor {
  constructor(private readonly http: OutboundHttpClient) {}

  async call(
    tool: ToolDefinition,
    values: Record<string, unknown> = {},
    variables: Record<string, unknown> = {},
  ): Promise<ToolCallResult> {
    let request;
    try {
      request = buildToolRequest(tool, values, variables);
    } catch (error) {
      if (!(error instanceof InvalidToolEndpointError)) throw error;
      const unsent = { method: tool.method.toUpperCase(), url: error.endpoint, headers: {}, body: null };
      return { request: unsent, response: null, durationMs: 0, error: { code: 'invalid_url', message: error.message } };
    }
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const answer = await this.http.request(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body ?? undefined,
        timeoutMs: tool.timeoutSeconds * 1000,
        maxBytes: TOOL_RESPONSE_MAX_BYTES,
        truncateBody: true,
        maxRedirects: MAX_REDIRECTS,
        confineToOrigin: true,
      });
      const text = answer.body.toString('utf8');
      return {
        request,
        response: {
          status: answer.status,
          headers: answer.headers,
          body: !answer.truncated && /\bjson\b/i.test(answer.headers['content-type'] ?? '') ? parseJson(text) : text,
          bodyTruncated: answer.truncated,
        },
        durationMs: elapsed(),
        error: null,
      };
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      // The client's messages name the host at most.
      return { request, response: null, durationMs: elapsed(), error: { code: error.code, message: error.message } };
    }
  }
}

/** Why a call failed as its owner sees it: no answer (the result's error), or an answer that is not a success. */
export function toolCallFailure(result: ToolCallResult): ToolCallError | null {
  if (result.error) return result.error;
  const status = result.response?.status;
  if (status === undefined || (status >= 200 && status < 300)) return null;
  return { code: 'http_status', message: `The endpoint answered ${status}` };
}

/** An object or array when the text is one; anything else (scalars included) stays text. */
function parseJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? value : text;
  } catch {
    return text;
  }
}
