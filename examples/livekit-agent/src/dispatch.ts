import type { CallType, SessionRequest } from './service-client.js';

/** What the service put in the job's dispatch metadata, read into the call the agent is to run. */
export interface CallDispatch {
  /** The id the call's session is opened under: the room's name, for every call the service knows. */
  externalId: string;
  type: CallType;
  /** The number an inbound call dialled, when the dispatch rule names it. */
  dialledNumber: string | null;
  /**
   * A warm transfer's consultation room (the service's dispatch names it): the person being rung in is to be briefed
   * about the call `externalId`, not talked to as a caller.
   */
  consultation?: Consultation;
}

/** What the agent tells the person of a warm transfer, from the service's dispatch. */
export interface Consultation {
  /** The transfer destination's name. */
  destination: string;
  /** The assistant's summary of the call so far, when it gave one. */
  summary: string | null;
}

/** The numbers LiveKit gives a SIP participant as attributes. */
export interface SipNumbers {
  /** `sip.phoneNumber`: the other party (the caller of an inbound call, the callee of an outbound one). */
  client: string | null;
  /** `sip.trunkPhoneNumber`: this side's number (the one dialled, or the one calling out). */
  trunk: string | null;
}

/** The dispatch rule's stand-in for the room's name (LiveKit names an inbound call's room when the call arrives). */
const ROOM_PLACEHOLDER = '{room}';

/**
 * Reads the job's metadata. The dialer's dispatch of an outbound call carries `{external_id, call_id, assistant_id,
 * campaign_id, lead_id, variables}` (the service has all of it on the call already); a web call's the same with
 * `type: "web"` (a person in a browser, no phone numbers); an inbound number's dispatch rule `{assistant_id,
 * phone_number_id, phone_number, external_id: "{room}"}`. Rules made before the service named the external id lack it, and a job
 * dispatched by hand may carry nothing: in both the room's name is the call's id, as it is for every call the
 * service knows.
 */
export function readDispatch(metadata: string | undefined, roomName: string): CallDispatch {
  const told = parseObject(metadata);
  const externalId =
    typeof told.external_id === 'string' && told.external_id !== ROOM_PLACEHOLDER ? told.external_id : roomName;
  const consultation = parseConsultation(told.consultation);
  return {
    externalId,
    ...(consultation ? { consultation } : {}),
    // A web call says so; of the others, only the dialer's dispatches name the call they placed.
    type: told.type === 'web' ? 'web' : told.call_id === undefined ? 'inbound' : 'outbound',
    dialledNumber: typeof told.phone_number === 'string' ? told.phone_number : null,
  };
}

/**
 * The session request of a dispatched call. An inbound call is matched to its assistant by the number dialled (the
 * rule's, else the trunk's); an outbound call is found as the dialer wrote it, so its numbers only fill the
 * request's required fields; a web call is found as the service wrote it, and has no numbers.
 */
export function sessionRequest(dispatch: CallDispatch, numbers: SipNumbers): SessionRequest {
  if (dispatch.type === 'web') return { type: 'web' };
  const assistantNumber = (dispatch.type === 'inbound' ? dispatch.dialledNumber : null) ?? numbers.trunk;
  if (!assistantNumber || !numbers.client) {
    throw new Error('The SIP participant does not say which numbers the call is between');
  }
  return { type: dispatch.type, client_phone_number: numbers.client, assistant_phone_number: assistantNumber };
}

function parseConsultation(value: unknown): Consultation | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { destination, summary } = value as Record<string, unknown>;
  if (typeof destination !== 'string') return undefined;
  return { destination, summary: typeof summary === 'string' && summary.trim() !== '' ? summary : null };
}

function parseObject(metadata: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(metadata || '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
