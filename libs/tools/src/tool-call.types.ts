import type { ToolCallErrorCode, ToolSchemaProperty } from '@app/contracts';

/** What a tool is, as the runtime needs it to call it (header values opened). */
export interface ToolDefinition {
  method: string;
  endpoint: string;
  bodyFormat: string;
  timeoutSeconds: number;
  headers: { name: string; value: string }[];
  staticFields: { key: string; value: string }[];
  schema: ToolSchemaProperty[];
}

/** The HTTP request a tool call becomes. */
export interface ToolHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Encoded JSON or form body; null for GET and DELETE. */
  body: string | null;
}

export interface ToolHttpResponse {
  status: number;
  headers: Record<string, string>;
  /** A parsed JSON object or array when the answer is one and complete, else the text. */
  body: unknown;
  bodyTruncated: boolean;
}

/**
 * Why a tool call failed: the guarded client's kind of failure (`timeout`, `blocked_address`, `tls`, `network`, ...),
 * or `http_status` for an answer that is not a success. The message names the endpoint's host at most, never its path,
 * query or a header: what the tool's owner set, and the call's variables and arguments, stay out of it.
 */
export interface ToolCallError {
  code: ToolCallErrorCode;
  message: string;
}

export interface ToolCallResult {
  request: ToolHttpRequest;
  response: ToolHttpResponse | null;
  durationMs: number;
  /** Why no response came back (timeout, refused address, TLS, network), or null. */
  error: ToolCallError | null;
}
