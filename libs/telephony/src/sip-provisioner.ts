/** Credentials a trunk authenticates with (digest auth). */
export interface SipCredentials {
  username: string;
  password: string;
}

/**
 * Which deployment and which of its trunks a provider object belongs to. It travels in the object's metadata, so
 * the reconcile can find what this deployment left behind without ever touching what others created.
 */
export interface TrunkOwner {
  /** This deployment's id (kept in its database, so a restored backup is still the same deployment). */
  deployment: string;
  /** The SIP trunk (its phone number's id) the object was made for. */
  trunk: number;
  /** When it was made (ms since the epoch): the reconcile leaves young objects to the request making them. */
  createdAt: number;
}

/** Who answers a number's inbound calls: the agent LiveKit dispatches into each call's room, and what it is told. */
export interface InboundDispatch {
  agentName: string;
  metadata: { assistant_id: number | null; phone_number_id: number; phone_number: string };
}

export interface InboundTrunkSpec {
  /** Human-readable name at the provider. */
  name: string;
  owner: TrunkOwner;
  dispatch: InboundDispatch;
  /** The numbers (or extension) whose incoming calls the trunk accepts, as the carrier sends them. */
  numbers: string[];
  /** IP authorisation: only these addresses or CIDR ranges may send calls. */
  allowedAddresses?: string[];
  /** Digest authorisation: the carrier must present these. */
  credentials?: SipCredentials;
}

export interface OutboundTrunkSpec {
  name: string;
  owner: TrunkOwner;
  /** The SIP server calls are sent to (host, no scheme or port). */
  address: string;
  /** Caller numbers the trunk may present. */
  numbers: string[];
  credentials: SipCredentials;
  /** ISO 3166-1 alpha-2 country of the destination, for the provider's routing. */
  destinationCountry?: string;
  /** Extra SIP headers on every outgoing INVITE. */
  headers?: Record<string, string>;
}

/** What an inbound trunk is at the provider: the trunk, and the rule that sends its calls to the agent. */
export interface ProvisionedInbound {
  trunkId: string;
  dispatchRuleId: string;
}

/** What the provider holds that carries an owner tag (objects of others are listed with `owner: null`). */
export interface ProviderInventory {
  inbound: { trunkId: string; numbers: string[]; owner: TrunkOwner | null }[];
  outbound: { trunkId: string; owner: TrunkOwner | null }[];
  dispatchRules: { dispatchRuleId: string; trunkIds: string[]; owner: TrunkOwner | null }[];
}

/**
 * The telephony provider, as the service needs it. Every call is one step: a failure leaves nothing behind
 * that the caller did not already get an id for (an adapter undoes its own partial work within a step).
 *
 * A number is carried by at most one inbound trunk (LiveKit refuses a second one without AllowedNumbers), so an
 * inbound trunk that keeps its number is replaced by releasing the number from the old trunk, creating the new one,
 * and on failure restoring the number to the old trunk, which never lost its id or settings.
 */
export interface SipProvisioner {
  createInboundTrunk(spec: InboundTrunkSpec): Promise<ProvisionedInbound>;
  createOutboundTrunk(spec: OutboundTrunkSpec): Promise<string>;
  /** Takes every number off an inbound trunk; calls to them reach no trunk until another one carries them. */
  releaseInboundNumbers(trunkId: string): Promise<void>;
  /** Puts numbers back on an inbound trunk that released them. */
  restoreInboundNumbers(trunkId: string, numbers: string[]): Promise<void>;
  /**
   * Deletes the trunk and its dispatch rule (none when `dispatchRuleId` is empty); what is already gone counts as
   * deleted, so a retry completes.
   */
  deleteInboundTrunk(inbound: ProvisionedInbound): Promise<void>;
  /** Deletes the trunk; one that is already gone counts as deleted. */
  deleteOutboundTrunk(trunkId: string): Promise<void>;
  /** Deletes a dispatch rule alone; one that is already gone counts as deleted. */
  deleteDispatchRule(dispatchRuleId: string): Promise<void>;
  /** Tells an inbound trunk's dispatch rule whom to dispatch, and with what (the rule keeps its id). */
  updateInboundDispatch(
    inbound: ProvisionedInbound,
    spec: Pick<InboundTrunkSpec, 'name' | 'owner' | 'dispatch'>,
  ): Promise<void>;
  /** Everything the provider holds, with the owner tag of what this service made. */
  inventory(): Promise<ProviderInventory>;
}

/** The numbers a released inbound trunk carries: a SIP user no call can be addressed to, unique to the trunk. */
export const releasedNumber = (trunkId: string) => `released:${trunkId}`;

const OWNER_KEY = 'voice_assistant_owner';

/** The metadata a provider object carries: its owner tag, plus whatever else the object tells its reader. */
export function ownerMetadata(owner: TrunkOwner, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...extra, [OWNER_KEY]: owner });
}

/** The owner tag in a provider object's metadata, or null for objects this service did not make. */
export function ownerOf(metadata: string | undefined): TrunkOwner | null {
  try {
    const owner = (JSON.parse(metadata || '{}') as Record<string, unknown>)[OWNER_KEY] as TrunkOwner | undefined;
    return owner && typeof owner.deployment === 'string' && Number.isInteger(owner.trunk) ? owner : null;
  } catch {
    return null;
  }
}

export const SIP_PROVISIONER = Symbol('SIP_PROVISIONER');

/** The provider refused or could not be reached. */
export class SipProvisioningError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SipProvisioningError';
  }
}

/**
 * The provider refused because another inbound trunk carries the number: LiveKit routes a call by its number
 * alone, across everything in its project, so the number is taken whoever holds it.
 */
export class SipNumberTakenError extends SipProvisioningError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SipNumberTakenError';
  }
}
