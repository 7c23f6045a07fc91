export type OutboundRequestErrorCode =
  | 'invalid_url'
  | 'unsupported_protocol'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'redirect_refused'
  | 'timeout'
  | 'too_large'
  | 'tls'
  | 'network';

/** A refusal or failure of the guarded client; its message names the host at most, never a path, query or userinfo. */
export class OutboundRequestError extends Error {
  override readonly name = 'OutboundRequestError';

  /** For a `timeout`: the limit that was reached. */
  readonly timeoutMs?: number;

  constructor(
    readonly code: OutboundRequestErrorCode,
    message: string,
    options?: { cause?: unknown; timeoutMs?: number },
  ) {
    super(message, options);
    this.timeoutMs = options?.timeoutMs;
  }

  /**
   * Whether trying again later may succeed; everything else is a property of the URL or the response. A TLS failure
   * counts as one: a certificate is renewed, a handshake fails on a server being reconfigured.
   */
  get transient(): boolean {
    return this.code === 'timeout' || this.code === 'network' || this.code === 'tls';
  }
}
