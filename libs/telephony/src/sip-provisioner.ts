/** Credentials a trunk authenticates with (digest auth). */
export interface SipCredentials {
  username: string;
  password: string;
}

export interface InboundTrunkSpec {
  /** Human-readable name at the provider. */
  name: string;
  /** The numbers (or extension) whose incoming calls the trunk accepts, as the carrier sends them. */
  numbers: string[];
  /** IP authorisation: only these addresses or CIDR ranges may send calls. */
  allowedAddresses?: string[];
  /** Digest authorisation: the carrier must present these. */
  credentials?: SipCredentials;
}

export interface OutboundTrunkSpec {
  name: string;
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

/**
 * The telephony provider, as the service needs it. Every call is one step: a failure leaves nothing behind
 * that the caller did not already get an id for (an adapter undoes its own partial work within a step).
 */
export interface SipProvisioner {
  createInboundTrunk(spec: InboundTrunkSpec): Promise<ProvisionedInbound>;
  createOutboundTrunk(spec: OutboundTrunkSpec): Promise<string>;
  deleteInboundTrunk(inbound: ProvisionedInbound): Promise<void>;
  deleteOutboundTrunk(trunkId: string): Promise<void>;
}

export const SIP_PROVISIONER = Symbol('SIP_PROVISIONER');

/** The provider refused or could not be reached. */
export class SipProvisioningError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SipProvisioningError';
  }
}
