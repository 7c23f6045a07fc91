/** One outbound call to place. Placing the same attempt twice must not call anyone twice. */
export interface DialRequest {
  /** The attempt's id, unique per call: the room the call runs in and the id the runtime reports it under. */
  attemptId: string;
  callId: number;
  assistantId: number;
  /** E.164 number to call. */
  to: string;
  /** E.164 caller number presented to the callee. */
  from: string;
  /** The provider's outbound trunk of the caller number, when it has one. */
  outboundTrunkId: string | null;
  /**
   * What the agent gets to know about the call: the lead's variables and where the call comes from. `external_id` is
   * the id the runtime opens the call's session under (`POST /api/internal/calls/{external_id}/session`): the
   * attempt's id, which is also the room's name.
   */
  metadata: {
    external_id: string;
    call_id: number;
    assistant_id: number;
    campaign_id: number | null;
    lead_id: number | null;
    variables: Record<string, unknown>;
  };
  /** True when an earlier try of this attempt may have reached the provider (its worker died mid-dial). */
  resumed: boolean;
}

/**
 * Places outbound calls. A dial either succeeds (the provider is calling) or throws `CallDialError`; what happens
 * on the call afterwards reaches the service through the call ingestion API, as the voice runtime reports it.
 */
export interface CallDialer {
  dial(request: DialRequest): Promise<void>;
}

export const CALL_DIALER = Symbol('CALL_DIALER');

/** Why a call cannot be placed from a number without a provider trunk to call through, as the call records it. */
export const noOutboundTrunk = (from: string): string =>
  `The caller number ${from} cannot place calls: it has no outbound SIP trunk.`;

/** The provider refused the call or could not be reached; the call ends `failed` with this message. */
export class CallDialError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CallDialError';
  }
}
