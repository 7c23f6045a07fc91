import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ClaimGrants, TokenVerifier } from 'livekit-server-sdk';

/**
 * LiveKit's Twirp API on 127.0.0.1, as strict as the real server for every call this service makes. Each rule
 * names the file and function of livekit/livekit (`pkg/service/...`) or livekit/protocol (`livekit/...`, `sip/...`)
 * it was read from; messages and codes are the real ones, so an adapter that passes here passes there.
 *
 * It keeps what it holds (trunks, dispatch rules, rooms, dispatches, participants, transfers) for tests to inspect,
 * and can be told to fail a call: `unavailable` answers 503 without doing anything; `timeout` never answers (the
 * client gives up); `applied-timeout` does the work and then never answers, as a server whose reply is lost does.
 * `sipOutcome` makes a dial or a transfer end as LiveKit's SIP bridge (livekit/sip) reports a busy line, a phone that
 * rings out, a decline or a carrier refusing the REFER. `selfHosted` answers `MoveParticipant` as the open-source
 * server does (it is LiveKit Cloud's).
 *
 * Not modelled: time (a room's empty and departure timeouts are kept, not run; a ringing phone answers at once), the
 * automatic dispatch of unnamed agents into a room made without agents (pkg/rtc/room.go
 * `createAgentDispatchesFromRoomAgent`), and the `error_details` metadata (the SIP status again, protobuf-encoded)
 * that no client here reads.
 */

export type Twirp = Record<string, any>;
export type FailureMode = 'unavailable' | 'timeout' | 'applied-timeout';

/** How a SIP dial or transfer ends, as the SIP bridge reports it (see `sipFailure`). */
export type FakeSipOutcome =
  'busy' | 'no-answer' | 'declined' | 'unreachable' | 'refer-refused' | { code: number; status: string };

export interface FakeRoom {
  sid: string;
  name: string;
  metadata: string;
  emptyTimeout: number;
  departureTimeout: number;
  maxParticipants: number;
  creationTime: number;
  agents: Twirp[];
}

/** A participant as LiveKit's store keeps it; one the SIP bridge brought keeps its `CreateSIPParticipant` request. */
export interface FakeParticipant extends Twirp {
  participantId: string;
  participantIdentity: string;
  roomName: string;
  kind: 'STANDARD' | 'SIP' | 'AGENT';
  attributes: Record<string, string>;
  participantMetadata: string;
  participantName: string;
  joinedAt: number;
}

export interface FakeInboundTrunk {
  sipTrunkId: string;
  name: string;
  metadata: string;
  numbers: string[];
  allowedAddresses: string[];
  allowedNumbers: string[];
  authUsername: string;
  authPassword: string;
}

export interface FakeOutboundTrunk {
  sipTrunkId: string;
  name: string;
  metadata: string;
  address: string;
  numbers: string[];
  authUsername: string;
  authPassword: string;
  destinationCountry: string;
  headers: Record<string, string>;
  transport: unknown;
}

export interface FakeDispatchRule {
  sipDispatchRuleId: string;
  name: string;
  metadata: string;
  trunkIds: string[];
  inboundNumbers: string[];
  numbers: string[];
  rule: Twirp;
  roomConfig?: Twirp;
}

/** A Twirp error: `code` and `msg` as the real server sends them, with the HTTP status Twirp maps the code to. */
class TwirpError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly meta?: Record<string, string>,
  ) {
    super(message);
  }
}

// twitchtv/twirp errors.go `ServerHTTPStatusFromErrorCode`.
const HTTP_STATUS: Record<string, number> = {
  canceled: 408,
  unknown: 500,
  invalid_argument: 400,
  malformed: 400,
  deadline_exceeded: 408,
  not_found: 404,
  bad_route: 404,
  unauthenticated: 401,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 412,
  aborted: 409,
  out_of_range: 400,
  internal: 500,
  unavailable: 503,
};

/** pkg/config/config.go: the default `limit.max_metadata_size`, `max_attributes_size` and `max_room_name_length`. */
const MAX_METADATA_BYTES = 512 * 1024;
const MAX_ATTRIBUTES_BYTES = 64 * 1024;
const MAX_ROOM_NAME_BYTES = 256;
/** pkg/config/config.go: the default `room.empty_timeout` and `room.departure_timeout`. */
const EMPTY_TIMEOUT_SECONDS = 5 * 60;
const DEPARTURE_TIMEOUT_SECONDS = 20;
/** pkg/service/sip.go `CreateSIPParticipant`: how long the server waits for an answer with `wait_until_answered`. */
const WAIT_UNTIL_ANSWERED_SECONDS = 80;
/** livekit/protocol livekit/attrs.go. */
const SIP_CALL_ID = 'sip.callID';

const invalid = (message: string) => new TwirpError('invalid_argument', message);

/**
 * An error that is no Twirp error where the server returns it (a psrpc error: pkg/service/errors.go, or one the SIP
 * bridge returns), as it reaches the client: pkg/service/server.go serves every service with protocol
 * utils/xtwirp `ServerPassErrorDetails`, whose `ToError` makes it a Twirp error of code `unknown` and message
 * `err.Error()`, then re-codes it from its gRPC status with the message `twirp error unknown: <message>` (twirp
 * errors.go `twerr.Error`).
 */
const internalError = (code: string, message: string, meta?: Record<string, string>) =>
  new TwirpError(code, `twirp error unknown: ${message}`, meta);

/**
 * livekit/protocol livekit/sip.go `sipCodeToGRPCCode` (and `SIPStatus.GRPCStatus` for codes it does not list), as
 * Twirp codes (protocol utils/xtwirp `ErrorCodeFromGRPC`).
 */
const SIP_STATUS_CODES: Record<string, number[]> = {
  not_found: [301, 302, 404, 410, 481, 604],
  permission_denied: [401, 402, 403, 433, 470, 603, 607, 608],
  unauthenticated: [407, 428, 436, 437, 438, 494],
  deadline_exceeded: [408, 504],
  failed_precondition: [409, 412, 482, 483, 500, 501, 502, 503],
  out_of_range: [416],
  resource_exhausted: [440, 480, 486, 600],
  aborted: [487, 491],
};
function twirpCodeOfSipStatus(code: number): string {
  const listed = Object.entries(SIP_STATUS_CODES).find(([, codes]) => codes.includes(code));
  if (listed) return listed[0];
  return code >= 500 && code < 600 ? 'failed_precondition' : 'invalid_argument';
}

/**
 * A SIP status reaching the client: livekit/sip pkg/errors/errors.go `ApplySIPStatus` codes the error from the
 * status, and xtwirp `WithDetailsFromStatus` adds `SIPStatus.TwirpErrorMeta` (livekit/protocol livekit/sip.go): the
 * code and the reason phrase. The message is the bridge's: `<prefix>sip status: <code>: <reason>`
 * (`SIPStatus.Error`).
 */
const sipStatusError = (prefix: string, status: { code: number; status: string }) =>
  internalError(twirpCodeOfSipStatus(status.code), `${prefix}sip status: ${status.code}: ${status.status}`, {
    sip_status_code: String(status.code),
    sip_status: status.status,
  });

/** livekit/protocol utils `NewGuid`: the prefix and the first 12 characters of a shortuuid (base57: no `-` or `_`). */
const GUID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const guid = (prefix: string) =>
  prefix + Array.from(randomBytes(12), (byte) => GUID_ALPHABET[byte % GUID_ALPHABET.length]).join('');

/** livekit/protocol livekit/sip.go `NormalizeNumber`: only number-like strings are normalised. */
export function normalizeNumber(number: string): string {
  if (number === '') return '';
  if (!/^\+?[\d\- ()]+$/.test(number)) return number;
  const digits = number.replace(/[ \-()]/g, '');
  return digits.startsWith('+') ? digits : `+${digits}`;
}

/** livekit/protocol livekit/sip.go `printNumbers` and sip/sip.go `printID`. */
const printNumbers = (numbers: string[]) => (numbers.length === 0 ? '<any>' : `[${numbers.map(quote).join(' ')}]`);
const printId = (id: string) => (id === '' ? '<new>' : id);
const quote = (text: string) => JSON.stringify(text);

/** Accepts both JSON spellings protojson accepts (`sip_trunk_id` and `sipTrunkId`). */
function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      camelKeys(item),
    ]),
  );
}

export class FakeLiveKit {
  readonly apiKey = 'APIfakelivekit';
  readonly apiSecret = 'fake-livekit-secret-long-enough-for-hs256';
  readonly inbound = new Map<string, FakeInboundTrunk>();
  readonly outbound = new Map<string, FakeOutboundTrunk>();
  readonly rules = new Map<string, FakeDispatchRule>();
  readonly rooms = new Map<string, FakeRoom>();
  readonly dispatches: { id: string; room: string; agentName: string; metadata: string }[] = [];
  readonly participants: FakeParticipant[] = [];
  /** Every transfer the SIP bridge completed: the call left its room for `transferTo`. */
  readonly transfers: { room: string; participantIdentity: string; sipCallId: string; transferTo: string }[] = [];
  /** Answer `MoveParticipant` as open-source livekit-server does (pkg/service/roommanager.go: "not implemented"). */
  selfHosted = false;
  /** Every call that reached a method, in order: `Service/Method`, the request as sent, when it took effect. */
  readonly calls: { method: string; body: Twirp; at: number }[] = [];
  /** A network's round trip, half before a call takes effect and half before its answer (for benchmarks). */
  latencyMs = 0;
  private readonly failures: { method: string | undefined; at: number | undefined; mode: FailureMode }[] = [];
  private readonly sipOutcomes: { method: string; outcome: FakeSipOutcome }[] = [];
  private readonly verifier = new TokenVerifier(this.apiKey, this.apiSecret);
  private counted = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeLiveKit> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const fake = new FakeLiveKit(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => void fake.handle(request, response));
    return fake;
  }

  get settings() {
    return { url: this.url, apiKey: this.apiKey, apiSecret: this.apiSecret };
  }

  /** Fails the next call of `method` (`SIP/CreateSIPInboundTrunk`, ...) `times` times. */
  failNext(method: string, mode: FailureMode = 'unavailable', times = 1): void {
    for (let i = 0; i < times; i++) this.failures.push({ method, at: undefined, mode });
  }

  /** Fails the `step`-th call from now (1 is the next one), whatever its method. */
  failStep(step: number, mode: FailureMode = 'unavailable'): void {
    this.failures.push({ method: undefined, at: this.counted + step, mode });
  }

  clearFailures(): void {
    this.failures.length = 0;
    this.sipOutcomes.length = 0;
  }

  /**
   * The next `times` calls of `SIP/CreateSIPParticipant` (the person's phone) or `SIP/TransferSIPParticipant` (the
   * transfer's destination) end as `outcome` instead of being answered.
   */
  sipOutcome(
    method: 'SIP/CreateSIPParticipant' | 'SIP/TransferSIPParticipant',
    outcome: FakeSipOutcome,
    times = 1,
  ): void {
    for (let i = 0; i < times; i++) this.sipOutcomes.push({ method, outcome });
  }

  /**
   * A participant joining a room through LiveKit's RTC API, which makes the room when it does not exist
   * (pkg/service/roommanager.go `StartSession`, `getOrCreateRoom`): a web call's person, an agent, or (`SIP`) a caller
   * the SIP bridge brought in on an inbound call, with the `sip.callID` attribute the bridge gives it.
   */
  join(
    room: string,
    participant: {
      identity: string;
      kind?: FakeParticipant['kind'];
      metadata?: string;
      attributes?: Record<string, string>;
    },
  ): FakeParticipant {
    const kind = participant.kind ?? 'STANDARD';
    return this.addParticipant({
      participantIdentity: participant.identity,
      roomName: room,
      kind,
      participantMetadata: participant.metadata ?? '',
      attributes: { ...(kind === 'SIP' ? { [SIP_CALL_ID]: guid('SCL_') } : {}), ...participant.attributes },
    });
  }

  /** The participants of a room, in the order they joined. */
  participantsOf(room: string): FakeParticipant[] {
    return this.participants.filter((participant) => participant.roomName === room);
  }

  /** The calls made since `mark` (a length of `calls` taken earlier), as `Service/Method` names. */
  methodsSince(mark: number): string[] {
    return this.calls.slice(mark).map((call) => call.method);
  }

  /** The inbound trunks carrying a number, as LiveKit would match a call to it. */
  inboundFor(number: string): FakeInboundTrunk[] {
    const key = normalizeNumber(number);
    return [...this.inbound.values()].filter((trunk) => trunk.numbers.some((item) => normalizeNumber(item) === key));
  }

  /**
   * What LiveKit makes of an inbound call to a trunk, sent without a PIN. protocol sip/sip.go `MatchDispatchRuleIter`
   * picks the rule: one naming the trunk before one naming no trunk, its `inboundNumbers` and `numbers` (when set)
   * holding the caller and the called number, PIN-protected rules skipped (their priority among several matches is
   * not modelled: the first is taken). `EvaluateDispatchRule` then names the room (individual:
   * `<roomPrefix>_<caller>_<random>`; callee: `<roomPrefix>_<called>`, `_<random>` when randomised; direct: the
   * rule's room) and says who joins it: the caller as `sip_<caller>` with the rule's metadata, and the rule's agents.
   * `from` and `to` are the user parts of the call's From and To URIs, as the carrier sends them.
   */
  inboundCall(call: { trunkId: string; from: string; to: string }): {
    roomName: string;
    participantIdentity: string;
    participantMetadata: string;
    agents: Twirp[];
  } {
    const candidates = [...this.rules.values()].filter(
      (rule) =>
        ((Object.values(rule.rule)[0] as Twirp | undefined)?.pin ?? '') === '' &&
        (rule.inboundNumbers.length === 0 || rule.inboundNumbers.includes(call.from)) &&
        (rule.numbers.length === 0 || rule.numbers.includes(call.to)),
    );
    const matched =
      candidates.find((rule) => rule.trunkIds.includes(call.trunkId)) ??
      candidates.find((rule) => rule.trunkIds.length === 0);
    if (!matched) throw new Error(`no dispatch rule matches a call from ${call.from} to ${call.to}`);
    const kind = matched.rule as Twirp;
    let roomName: string;
    if (kind.dispatchRuleIndividual) {
      const { roomPrefix, noRandomness } = kind.dispatchRuleIndividual as Twirp;
      roomName = roomPrefix ? `${roomPrefix}_${call.from}` : call.from;
      if (!noRandomness) roomName += `_${guid('')}`;
    } else if (kind.dispatchRuleCallee) {
      const { roomPrefix, randomize } = kind.dispatchRuleCallee as Twirp;
      roomName = roomPrefix ? `${roomPrefix}_${call.to}` : call.to;
      if (randomize) roomName += `_${guid('')}`;
    } else {
      roomName = (kind.dispatchRuleDirect as Twirp).roomName as string;
    }
    return {
      roomName,
      participantIdentity: `sip_${call.from}`,
      participantMetadata: matched.metadata,
      agents: (matched.roomConfig?.agents ?? []) as Twirp[],
    };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const reply = (status: number, body: object) => {
      if (!response.destroyed) {
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
    };
    const fail = (error: TwirpError) =>
      reply(HTTP_STATUS[error.code] ?? 500, {
        code: error.code,
        msg: error.message,
        ...(error.meta ? { meta: error.meta } : {}),
      });
    const method = (request.url ?? '').replace(/^\/twirp\/livekit\./, '');
    const handler = this.handlers[method];
    if (request.method !== 'POST' || !handler) {
      return fail(new TwirpError('bad_route', `no handler for path ${quote(request.url ?? '')}`));
    }
    let body: Twirp;
    try {
      body = camelKeys(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')) as Twirp;
    } catch {
      return fail(new TwirpError('malformed', 'the json request could not be decoded'));
    }
    // livekit/livekit pkg/service/auth.go: an API key's JWT with the grants each method needs.
    const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    const grants = await this.verifier.verify(token).catch(() => undefined);
    if (!grants) return fail(new TwirpError('unauthenticated', 'invalid token'));
    this.counted++;
    const call = { method, body, at: Date.now() };
    this.calls.push(call);
    if (this.latencyMs > 0) {
      await delay(this.latencyMs / 2);
      call.at = Date.now();
    }

    const failure = this.takeFailure(method);
    if (failure?.mode === 'unavailable') {
      return fail(new TwirpError('unavailable', 'service temporarily unavailable'));
    }
    if (failure?.mode === 'timeout') return; // dropped before any work, never answered
    try {
      if (!PERMISSIONS[method]?.(grants, body)) throw denied();
      const result = handler(body, grants);
      if (failure) return; // timeout: the client is left waiting (applied-timeout kept the work)
      if (this.latencyMs > 0) await delay(this.latencyMs / 2);
      reply(200, result);
    } catch (error) {
      if (failure) return;
      if (error instanceof TwirpError) return fail(error);
      fail(new TwirpError('internal', (error as Error).message));
    }
  }

  private takeFailure(method: string) {
    const index = this.failures.findIndex(
      (failure) => failure.at === this.counted || (failure.at === undefined && failure.method === method),
    );
    if (index < 0) return undefined;
    return this.failures.splice(index, 1)[0];
  }

  private readonly handlers: Record<string, (body: Twirp, grants: ClaimGrants) => object> = {
    'SIP/CreateSIPInboundTrunk': (body) => this.createInbound(body),
    'SIP/CreateSIPOutboundTrunk': (body) => this.createOutbound(body),
    'SIP/UpdateSIPInboundTrunk': (body) => this.updateInbound(body),
    'SIP/UpdateSIPOutboundTrunk': (body) => this.updateOutbound(body),
    'SIP/ListSIPInboundTrunk': (body) => ({ items: this.list(this.inbound, body) }),
    'SIP/ListSIPOutboundTrunk': (body) => ({ items: this.list(this.outbound, body) }),
    'SIP/DeleteSIPTrunk': (body) => this.deleteTrunk(body),
    'SIP/CreateSIPDispatchRule': (body) => this.createRule(body),
    'SIP/UpdateSIPDispatchRule': (body) => this.updateRule(body),
    'SIP/ListSIPDispatchRule': (body) => ({ items: this.listRules(body) }),
    'SIP/DeleteSIPDispatchRule': (body) => this.deleteRule(body),
    'SIP/CreateSIPParticipant': (body) => this.createParticipant(body),
    'SIP/TransferSIPParticipant': (body, grants) => this.transferParticipant(body, grants),
    'AgentDispatchService/CreateDispatch': (body) => this.createDispatch(body),
    'AgentDispatchService/ListDispatch': (body) => this.listDispatch(body),
    'RoomService/CreateRoom': (body) => this.createRoom(body),
    'RoomService/ListRooms': (body) => ({
      rooms: [...this.rooms.values()]
        .filter((room) => !body.names?.length || body.names.includes(room.name))
        .map((room) => this.roomInfo(room)),
    }),
    'RoomService/DeleteRoom': (body) => this.deleteRoom(body),
    // pkg/service/roomservice.go `ListParticipants` (redisstore.go `ListParticipants`): a room that is gone has none.
    'RoomService/ListParticipants': (body) => ({
      participants: this.participantsOf(body.room ?? '').map(participantInfo),
    }),
    'RoomService/GetParticipant': (body) => participantInfo(this.participantIn(body.room, body.identity)),
    'RoomService/RemoveParticipant': (body) => this.removeParticipant(body),
    'RoomService/MoveParticipant': (body) => this.moveParticipant(body),
  };

  /** pkg/service/sip.go `CreateSIPInboundTrunk`. */
  private createInbound(body: Twirp) {
    const trunk = body.trunk as Twirp | undefined;
    // livekit/sip.go `CreateSIPInboundTrunkRequest.ValidateResult`.
    if (!trunk) throw invalid('missing trunk');
    if (trunk.sipTrunkId) throw invalid('trunk id must not be set');
    const info = this.inboundInfo(trunk, '');
    this.validateInbound(info);
    this.validateTrunks([...this.inbound.values(), info]);
    info.sipTrunkId = guid('ST_');
    this.inbound.set(info.sipTrunkId, info);
    return info;
  }

  /** pkg/service/sip.go `CreateSIPOutboundTrunk`: validated alone, never against other trunks. */
  private createOutbound(body: Twirp) {
    const trunk = body.trunk as Twirp | undefined;
    // livekit/sip.go `CreateSIPOutboundTrunkRequest.ValidateResult`.
    if (!trunk) throw invalid('missing trunk');
    if (trunk.sipTrunkId) throw invalid('trunk id must not be set');
    const info = this.outboundInfo(trunk, '');
    this.validateOutbound(info);
    info.sipTrunkId = guid('ST_');
    this.outbound.set(info.sipTrunkId, info);
    return info;
  }

  /** pkg/service/sip.go `UpdateSIPInboundTrunk`: the updated trunk is validated against every other one. */
  private updateInbound(body: Twirp) {
    const id = updateTarget(body, 'trunk', 'sipTrunkId');
    if (body.update) this.validateListUpdates(body.update, ['numbers', 'allowedAddresses', 'allowedNumbers']);
    const current = this.inbound.get(id);
    if (!current) throw new TwirpError('not_found', 'requested sip trunk does not exist');
    let next: FakeInboundTrunk;
    if (body.replace) {
      next = this.inboundInfo(body.replace, id);
    } else {
      // livekit/sip.go `SIPInboundTrunkUpdate.ApplyResult`.
      const update = body.update as Twirp;
      next = { ...current };
      next.numbers = applyListUpdate(current.numbers, update.numbers);
      next.allowedAddresses = applyListUpdate(current.allowedAddresses, update.allowedAddresses);
      next.allowedNumbers = applyListUpdate(current.allowedNumbers, update.allowedNumbers);
      for (const field of ['authUsername', 'authPassword', 'name', 'metadata'] as const) {
        if (typeof update[field] === 'string') next[field] = update[field];
      }
    }
    this.validateInbound(next);
    this.validateTrunks([...this.inbound.values()].map((trunk) => (trunk.sipTrunkId === id ? next : trunk)));
    this.inbound.set(id, next);
    return next;
  }

  /** pkg/service/sip.go `UpdateSIPOutboundTrunk`: "No additional validation needed for outbound." */
  private updateOutbound(body: Twirp) {
    const id = updateTarget(body, 'trunk', 'sipTrunkId');
    if (body.update) this.validateListUpdates(body.update, ['numbers']);
    const current = this.outbound.get(id);
    if (!current) throw new TwirpError('not_found', 'requested sip trunk does not exist');
    const next = body.replace
      ? this.outboundInfo(body.replace, id)
      : {
          ...current,
          ...Object.fromEntries(
            ['address', 'authUsername', 'authPassword', 'destinationCountry', 'name', 'metadata']
              .filter((field) => typeof body.update[field] === 'string')
              .map((field) => [field, body.update[field]]),
          ),
          numbers: applyListUpdate(current.numbers, body.update.numbers),
        };
    this.validateOutbound(next);
    this.outbound.set(id, next);
    return next;
  }

  /**
   * pkg/service/sip.go `DeleteSIPTrunk` and redisstore_sip.go `DeleteSIPTrunk`: an HDEL, so a trunk that does not
   * exist is deleted all the same. Dispatch rules naming the trunk stay.
   */
  private deleteTrunk(body: Twirp) {
    const id = (body.sipTrunkId ?? '') as string;
    if (id === '') throw invalid('trunk ID is required');
    this.inbound.delete(id);
    this.outbound.delete(id);
    return { sipTrunkId: id };
  }

  /** pkg/service/sip.go `CreateSIPDispatchRule` with the legacy request fields the SDK sends. */
  private createRule(body: Twirp) {
    const source = (body.dispatchRule ?? body) as Twirp;
    // livekit/sip.go `CreateSIPDispatchRuleRequest.Validate`, `SIPDispatchRuleInfo.Validate`.
    if (body.dispatchRule?.sipDispatchRuleId) throw invalid('rule id must not be set');
    if (!source.rule || Object.keys(source.rule).length === 0) throw invalid('missing rule');
    const info = ruleInfo(source, '');
    this.validateRules([...this.rules.values(), info]);
    info.sipDispatchRuleId = guid('SDR_');
    this.rules.set(info.sipDispatchRuleId, info);
    return info;
  }

  /**
   * pkg/service/sip.go `UpdateSIPDispatchRule` with livekit/sip.go `UpdateSIPDispatchRuleRequest.Validate`: the
   * rule is replaced (or its fields updated) and validated against every other rule.
   */
  private updateRule(body: Twirp) {
    const id = updateTarget(body, 'rule', 'sipDispatchRuleId');
    if (body.replace && (!body.replace.rule || Object.keys(body.replace.rule).length === 0)) {
      throw invalid('missing rule');
    }
    const current = this.rules.get(id);
    if (!current) throw new TwirpError('not_found', 'requested sip dispatch rule does not exist');
    const source = (body.replace ?? body.update) as Twirp;
    const next: FakeDispatchRule = body.replace
      ? ruleInfo(source, id)
      : {
          ...current,
          ...(typeof source.name === 'string' ? { name: source.name } : {}),
          ...(typeof source.metadata === 'string' ? { metadata: source.metadata } : {}),
          ...(source.rule ? { rule: source.rule } : {}),
          trunkIds: applyListUpdate(current.trunkIds, source.trunkIds),
        };
    this.validateRules([...this.rules.values()].map((rule) => (rule.sipDispatchRuleId === id ? next : rule)));
    this.rules.set(id, next);
    return next;
  }

  /** pkg/service/sip.go `DeleteSIPDispatchRule`: loads the rule first, so a missing one is NotFound. */
  private deleteRule(body: Twirp) {
    const id = (body.sipDispatchRuleId ?? '') as string;
    if (id === '') throw invalid('dispatch rule ID is required');
    const rule = this.rules.get(id);
    if (!rule) throw new TwirpError('not_found', 'requested sip dispatch rule does not exist');
    this.rules.delete(id);
    return rule;
  }

  /**
   * pkg/service/sip.go `CreateSIPParticipantRequest`, livekit/sip.go `CreateSIPParticipantRequest.ValidateResult`
   * and rpc/sip.go `NewCreateSIPParticipantRequestResult`: the participant's identity (`sip_<number>` when none is
   * given) and the attributes the SIP bridge gives it. The bridge joins the room with it, making the room. With
   * `wait_until_answered` LiveKit answers once the phone answered or the call failed (livekit/sip pkg/sip/client.go
   * `CreateSIPParticipant`); without, at once, and a call that fails then leaves the room.
   */
  private createParticipant(body: Twirp) {
    if (!body.sipTrunkId && !body.trunk && !body.sipNumber) throw invalid('missing sip trunk id and sip number');
    if (!body.sipCallTo) throw invalid('missing sip callee number');
    if (String(body.sipCallTo).includes('@')) {
      throw invalid('SipCallTo should be a phone number or SIP user, not a full SIP URI');
    }
    if (!body.roomName) throw invalid('missing room name');
    if (typeof body.displayName === 'string' && body.displayName.length > 128) {
      throw invalid('DisplayName too long (max 128 characters)');
    }
    const trunk = body.sipTrunkId ? this.outbound.get(body.sipTrunkId) : undefined;
    if (body.sipTrunkId && !trunk) throw new TwirpError('not_found', 'requested sip trunk does not exist');
    if (!body.sipNumber && (!trunk || trunk.numbers.length === 0)) {
      throw internalError('failed_precondition', 'no numbers on outbound trunk');
    }
    const identity = (body.participantIdentity as string | undefined) || `sip_${body.sipCallTo}`;
    const sipCallId = guid('SCL_');
    const outcome = this.takeSipOutcome('SIP/CreateSIPParticipant');
    if (outcome && body.waitUntilAnswered) {
      throw this.sipFailure('SIP/CreateSIPParticipant', outcome, durationSeconds(body.ringingTimeout));
    }
    const answer = { participantId: guid('PA_'), participantIdentity: identity, roomName: body.roomName, sipCallId };
    if (outcome) return answer;
    this.addParticipant({
      ...body,
      participantId: answer.participantId,
      participantIdentity: identity,
      roomName: body.roomName,
      participantMetadata: body.participantMetadata ?? '',
      participantName: body.participantName ?? '',
      kind: 'SIP',
      sipCallId,
      attributes: {
        ...body.participantAttributes,
        [SIP_CALL_ID]: sipCallId,
        'sip.trunkID': body.sipTrunkId ?? '',
        ...(body.hidePhoneNumber
          ? {}
          : {
              'sip.phoneNumber': body.sipCallTo,
              'sip.hostname': trunk?.address ?? '',
              'sip.trunkPhoneNumber': body.sipNumber || trunk?.numbers[0],
            }),
        'sip.callStatus': 'active',
      },
    });
    return answer;
  }

  /**
   * pkg/service/sip.go `TransferSIPParticipant` and `transferSIPParticipantRequest`: the room and the identity are
   * checked before the grants (SIP call, then room admin of that room), then livekit/sip.go
   * `TransferSIPParticipantRequest.ValidateResult`; the participant is looked up (`RoomService.GetParticipant`) and
   * must carry the bridge's `sip.callID`. The bridge refuses a call not yet answered (livekit/sip pkg/sip/outbound.go
   * `transferCall`). A transfer done, the bridge hangs up its side (pkg/sip/inbound.go `transferCall`): the
   * participant leaves the room.
   */
  private transferParticipant(body: Twirp, grants: ClaimGrants) {
    if (!body.roomName) throw internalError('invalid_argument', 'Missing room name');
    if (!body.participantIdentity) throw internalError('invalid_argument', 'Missing participant identity');
    if (!grants.sip?.call || !roomAdmin(grants, body.roomName)) throw denied();
    const transferTo = validTransferTarget((body.transferTo ?? '') as string);
    const participant = this.participantIn(body.roomName, body.participantIdentity);
    const sipCallId = participant.attributes[SIP_CALL_ID];
    if (!sipCallId) throw internalError('invalid_argument', 'no SIP session associated with participant');
    if (participant.attributes['sip.callStatus'] === 'dialing') {
      throw internalError('failed_precondition', "can't transfer non established call");
    }
    const outcome = this.takeSipOutcome('SIP/TransferSIPParticipant');
    if (outcome) throw this.sipFailure('SIP/TransferSIPParticipant', outcome, durationSeconds(body.ringingTimeout));
    this.participants.splice(this.participants.indexOf(participant), 1);
    this.transfers.push({
      room: body.roomName,
      participantIdentity: participant.participantIdentity,
      sipCallId,
      transferTo,
    });
    return {};
  }

  /**
   * How the SIP bridge reports a dial or a transfer that did not connect (livekit/sip).
   * - A dial's phone rings out: pkg/sip/outbound.go `sipSignal` bounds the INVITE by the ringing timeout and
   *   pkg/sip/protocol.go `sipResponse` answers psrpc Canceled `ErrSIPRequestTimeout`; unless the server's own 80 s
   *   (pkg/service/sip.go `CreateSIPParticipant`) run out first (a ringing timeout unset is the bridge's 3 minutes,
   *   pkg/sip/participant.go `defaultRingingTimeout`): psrpc `ErrRequestTimedOut`, DeadlineExceeded.
   * - A transfer rings out: pkg/service/sip.go `TransferSIPParticipant` makes the ringing timeout the request's
   *   deadline, and the bridge's; the server's request times out first (psrpc `ErrRequestTimedOut`).
   * - The carrier refuses the REFER: pkg/sip/protocol.go `sendRefer` returns the SIPStatus of its answer.
   * - The transfer's destination answers a failure: `handleReferNotify`, "call transfer failed: <status>".
   * - The dialled phone answers a failure: pkg/sip/outbound.go `sipOutbound.Invite`, "INVITE failed: <status>" for
   *   400, 404, 480, 486 and 488, "unexpected status from INVITE response: <status>" for the others.
   */
  private sipFailure(method: string, outcome: FakeSipOutcome, ringingSeconds: number): TwirpError {
    const dial = method === 'SIP/CreateSIPParticipant';
    if (outcome === 'no-answer') {
      const ringing = ringingSeconds > 0 ? ringingSeconds : 180;
      return dial && ringing < WAIT_UNTIL_ANSWERED_SECONDS
        ? internalError('canceled', 'sip request timed out')
        : internalError('deadline_exceeded', 'request timed out');
    }
    if (outcome === 'refer-refused') {
      if (dial) throw new Error('refer-refused is how a transfer ends, not a dial');
      return sipStatusError('', { code: 403, status: 'Forbidden' });
    }
    const status =
      outcome === 'busy'
        ? { code: 486, status: 'Busy Here' }
        : outcome === 'declined'
          ? { code: 603, status: 'Decline' }
          : outcome === 'unreachable'
            ? { code: 404, status: 'Not Found' }
            : outcome;
    if (!dial) return sipStatusError('call transfer failed: ', status);
    const listed = [400, 404, 480, 486, 488].includes(status.code);
    return sipStatusError(listed ? 'INVITE failed: ' : 'unexpected status from INVITE response: ', status);
  }

  private takeSipOutcome(method: string): FakeSipOutcome | undefined {
    const index = this.sipOutcomes.findIndex((each) => each.method === method);
    return index < 0 ? undefined : this.sipOutcomes.splice(index, 1)[0].outcome;
  }

  /**
   * pkg/service/agent_dispatch_service.go `CreateDispatch`: the deployment's name (`ValidateDeployment`), then the
   * default LimitConfig's bounds; with rooms made on demand (the default `room.auto_create`), it makes the room.
   */
  private createDispatch(body: Twirp) {
    const deployment = deploymentError(body.deployment);
    if (deployment) throw internalError('invalid_argument', deployment);
    if (typeof body.metadata === 'string' && Buffer.byteLength(body.metadata) > MAX_METADATA_BYTES) {
      throw internalError('invalid_argument', 'metadata size exceeds limits');
    }
    if (attributesBytes(body.attributes) > MAX_ATTRIBUTES_BYTES) {
      throw internalError('invalid_argument', 'attribute size exceeds limits');
    }
    this.openRoom({ name: body.room });
    const dispatch = {
      id: guid('AD_'),
      room: body.room,
      agentName: body.agentName ?? '',
      metadata: body.metadata ?? '',
    };
    this.dispatches.push(dispatch);
    return dispatch;
  }

  /**
   * pkg/service/agent_dispatch_service.go `ListDispatch`: asked of the room's node over psrpc, so a room that does
   * not exist answers nobody (psrpc pkg/client/rpc.go `selectServer`: `ErrNoResponse`).
   */
  private listDispatch(body: Twirp) {
    if (!this.rooms.has(body.room)) throw internalError('unavailable', 'no response from servers');
    return { agentDispatches: this.dispatches.filter((dispatch) => dispatch.room === body.room) };
  }

  /**
   * pkg/service/roomservice.go `CreateRoom`: the name's length and the metadata's size (the room's and each agent
   * dispatch's, with its attributes) within the default LimitConfig; then pkg/service/roommanager.go
   * `getOrCreateRoom`: a room that exists is answered as it is (its agents not dispatched again), a new one gets its
   * agents dispatched (pkg/rtc/room.go `createAgentDispatchesFromRoomAgent`), each with its name, metadata and
   * attributes as the request gave them.
   */
  private createRoom(body: Twirp) {
    const name = (body.name ?? '') as string;
    if (Buffer.byteLength(name) > MAX_ROOM_NAME_BYTES) {
      throw internalError('invalid_argument', `room name length exceeds limits: max length ${MAX_ROOM_NAME_BYTES}`);
    }
    const agents = (body.agents ?? []) as Twirp[];
    for (const metadata of [body.metadata, ...agents.map((agent) => agent.metadata)]) {
      if (typeof metadata === 'string' && Buffer.byteLength(metadata) > MAX_METADATA_BYTES) {
        throw limitError('metadata size exceeds limits', MAX_METADATA_BYTES);
      }
    }
    if (agents.some((agent) => attributesBytes(agent.attributes) > MAX_ATTRIBUTES_BYTES)) {
      throw limitError('attribute size exceeds limits', MAX_ATTRIBUTES_BYTES);
    }
    return this.roomInfo(this.openRoom(body));
  }

  /**
   * pkg/service/roomservice.go `DeleteRoom`: a room that does not exist is `ErrRoomNotFound`; pkg/rtc/room.go `Close`
   * disconnects everyone in it (the SIP bridge hangs up its calls) and its agents' jobs end with it.
   */
  private deleteRoom(body: Twirp) {
    if (!this.rooms.has(body.room)) throw internalError('not_found', 'requested room does not exist');
    this.rooms.delete(body.room);
    for (const participant of this.participantsOf(body.room)) {
      this.participants.splice(this.participants.indexOf(participant), 1);
    }
    for (const dispatch of this.dispatches.filter((each) => each.room === body.room)) {
      this.dispatches.splice(this.dispatches.indexOf(dispatch), 1);
    }
    return {};
  }

  /** pkg/service/roomservice.go `RemoveParticipant`: `HasParticipant` first, so one not in the room is not found. */
  private removeParticipant(body: Twirp) {
    const participant = this.participantIn(body.room, body.identity);
    this.participants.splice(this.participants.indexOf(participant), 1);
    return {};
  }

  /**
   * pkg/service/roomservice.go `MoveParticipant`: room admin of the room with `destinationRoom` the destination
   * (`EnsureDestRoomPermission`, checked by the grant table), and two different rooms. The move itself is LiveKit
   * Cloud's and its code is not public: the participant must be in the room, and the destination room exist (an
   * assumption, stricter rather than kinder). The open-source server (`selfHosted`) answers from
   * pkg/service/roommanager.go `MoveParticipant` ("not implemented") when the participant is there, and nobody
   * answers the participant's psrpc topic when it is not.
   */
  private moveParticipant(body: Twirp) {
    if ((body.room ?? '') === (body.destinationRoom ?? '')) {
      throw limitError('destination room cannot be the same as source room', '');
    }
    const participant = this.participantsOf(body.room ?? '').find((each) => each.participantIdentity === body.identity);
    if (this.selfHosted) {
      throw participant
        ? internalError('unknown', 'not implemented')
        : internalError('unavailable', 'no response from servers');
    }
    if (!participant) throw internalError('not_found', 'participant does not exist');
    if (!this.rooms.has(body.destinationRoom)) throw internalError('not_found', 'requested room does not exist');
    participant.roomName = body.destinationRoom;
    return {};
  }

  /** pkg/service/redisstore.go `LoadParticipant`: a participant not in the room is `ErrParticipantNotFound`. */
  private participantIn(room: string | undefined, identity: string | undefined): FakeParticipant {
    const participant = this.participantsOf(room ?? '').find((each) => each.participantIdentity === identity);
    if (!participant) throw internalError('not_found', 'participant does not exist');
    return participant;
  }

  /** A room made as pkg/service/roomallocator.go `CreateRoom` makes one, or the live one of that name unchanged. */
  private openRoom(request: Twirp): FakeRoom {
    const existing = this.rooms.get(request.name);
    if (existing) return existing;
    const room: FakeRoom = {
      sid: guid('RM_'),
      name: request.name,
      metadata: request.metadata ?? '',
      emptyTimeout: request.emptyTimeout || EMPTY_TIMEOUT_SECONDS,
      departureTimeout: request.departureTimeout || DEPARTURE_TIMEOUT_SECONDS,
      maxParticipants: request.maxParticipants ?? 0,
      creationTime: Math.floor(Date.now() / 1000),
      agents: request.agents ?? [],
    };
    this.rooms.set(room.name, room);
    for (const agent of room.agents) {
      // pkg/rtc/room.go `createAgentDispatchFromRoomDispatch`: an invalid deployment is logged and not dispatched.
      if (deploymentError(agent.deployment)) continue;
      this.dispatches.push({
        id: guid('AD_'),
        room: room.name,
        agentName: agent.agentName ?? '',
        metadata: agent.metadata ?? '',
      });
    }
    return room;
  }

  /**
   * A participant joining its room (made when it does not exist). An identity is unique in a room: the newer
   * participant replaces the older (pkg/service/roommanager.go `StartSession`).
   */
  private addParticipant(fields: Twirp & Pick<FakeParticipant, 'participantIdentity' | 'roomName'>): FakeParticipant {
    this.openRoom({ name: fields.roomName });
    const previous = this.participantsOf(fields.roomName).find(
      (each) => each.participantIdentity === fields.participantIdentity,
    );
    if (previous) this.participants.splice(this.participants.indexOf(previous), 1);
    const participant: FakeParticipant = {
      participantId: guid('PA_'),
      kind: 'STANDARD',
      attributes: {},
      participantMetadata: '',
      participantName: '',
      joinedAt: Date.now(),
      ...fields,
    };
    this.participants.push(participant);
    return participant;
  }

  /** A room as livekit.Room's JSON carries it. */
  private roomInfo(room: FakeRoom) {
    return {
      sid: room.sid,
      name: room.name,
      emptyTimeout: room.emptyTimeout,
      departureTimeout: room.departureTimeout,
      maxParticipants: room.maxParticipants,
      creationTime: String(room.creationTime),
      metadata: room.metadata,
      numParticipants: this.participantsOf(room.name).length,
    };
  }

  private inboundInfo(trunk: Twirp, id: string): FakeInboundTrunk {
    return {
      sipTrunkId: id,
      name: trunk.name ?? '',
      metadata: trunk.metadata ?? '',
      numbers: trunk.numbers ?? [],
      allowedAddresses: trunk.allowedAddresses ?? [],
      allowedNumbers: trunk.allowedNumbers ?? [],
      authUsername: trunk.authUsername ?? '',
      authPassword: trunk.authPassword ?? '',
    };
  }

  private outboundInfo(trunk: Twirp, id: string): FakeOutboundTrunk {
    return {
      sipTrunkId: id,
      name: trunk.name ?? '',
      metadata: trunk.metadata ?? '',
      address: trunk.address ?? '',
      numbers: trunk.numbers ?? [],
      authUsername: trunk.authUsername ?? '',
      authPassword: trunk.authPassword ?? '',
      destinationCountry: trunk.destinationCountry ?? '',
      headers: trunk.headers ?? {},
      transport: trunk.transport,
    };
  }

  /** livekit/sip.go `SIPInboundTrunkInfo.ValidateResult`. */
  private validateInbound(trunk: FakeInboundTrunk): void {
    const hasAuth = trunk.authUsername !== '' || trunk.authPassword !== '';
    if (!hasAuth && trunk.allowedAddresses.length === 0 && trunk.numbers.length === 0) {
      throw invalid(
        'for security, one of the fields must be set: AuthUsername+AuthPassword, AllowedAddresses or Numbers',
      );
    }
  }

  /** livekit/sip.go `SIPOutboundTrunkInfo.ValidateResult` with `validateHostnameFormat`. */
  private validateOutbound(trunk: FakeOutboundTrunk): void {
    if (trunk.numbers.length === 0) throw invalid('no trunk numbers specified');
    if (trunk.address === '') throw invalid('no outbound address specified');
    if (trunk.address.includes('transport=')) throw invalid('trunk address should not contain transport parameter');
    if (/[@;]/.test(trunk.address) || /^sips?:/.test(trunk.address)) {
      throw invalid('trunk address should be a hostname or IP, not SIP URI');
    }
  }

  /** livekit/types.go `ListUpdate.Validate`. */
  private validateListUpdates(update: Twirp, fields: string[]): void {
    for (const field of fields) {
      const list = update[field] as Twirp | undefined;
      if (!list) continue;
      const change = (list.set?.length ?? 0) + (list.add?.length ?? 0) + (list.remove?.length ?? 0) > 0;
      if (!list.clear && !change) throw invalid('unsupported list update operation');
      if (list.clear && change) throw invalid('cannot clear and change the list at the same time');
      if (list.set?.length && (list.add?.length ?? 0) + (list.remove?.length ?? 0) > 0) {
        throw invalid('cannot set and change the list at the same time');
      }
      for (const item of [...(list.set ?? []), ...(list.add ?? [])]) {
        if (item === '') throw invalid('empty element in the list');
      }
    }
  }

  /**
   * protocol sip/sip.go `ValidateTrunksIter` and `validateTrunkInbound`: trunks are bucketed by each (normalised)
   * number they carry, or by "" when they carry none; within a bucket, two trunks without AllowedNumbers conflict,
   * and two trunks listing the same AllowedNumber conflict.
   */
  private validateTrunks(trunks: FakeInboundTrunk[]): void {
    const buckets = new Map<string, Map<string, FakeInboundTrunk>>();
    for (const trunk of trunks) {
      const keys = trunk.numbers.length === 0 ? [''] : [...new Set(trunk.numbers.map(normalizeNumber))];
      for (const key of keys) {
        const byInbound = buckets.get(key) ?? new Map<string, FakeInboundTrunk>();
        buckets.set(key, byInbound);
        if (trunk.allowedNumbers.length === 0) {
          const other = byInbound.get('');
          if (other && other.sipTrunkId !== trunk.sipTrunkId) {
            throw invalid(
              `Conflicting inbound SIP Trunks: ${quote(printId(trunk.sipTrunkId))} and ${quote(printId(other.sipTrunkId))}, using the same number(s) ${printNumbers(trunk.numbers)} without AllowedNumbers set`,
            );
          }
          byInbound.set('', trunk);
        } else {
          for (const allowed of new Set(trunk.allowedNumbers)) {
            const other = byInbound.get(normalizeNumber(allowed));
            if (other && other.sipTrunkId !== trunk.sipTrunkId) {
              throw invalid(
                `Conflicting inbound SIP Trunks: ${quote(printId(trunk.sipTrunkId))} and ${quote(printId(other.sipTrunkId))}, using the same number(s) ${printNumbers(trunk.numbers)} and AllowedNumber ${quote(allowed)}`,
              );
            }
            byInbound.set(normalizeNumber(allowed), trunk);
          }
        }
      }
    }
  }

  /**
   * protocol sip/sip.go `DispatchRuleValidator.Validate`: one rule per (trunk, inbound number, number, PIN); an
   * empty list stands for "any" and collides only with other rules for any.
   */
  private validateRules(rules: FakeDispatchRule[]): void {
    const seen = new Map<string, FakeDispatchRule>();
    for (const rule of rules) {
      const pin = (Object.values(rule.rule)[0] as Twirp | undefined)?.pin ?? '';
      for (const trunk of rule.trunkIds.length ? rule.trunkIds : ['']) {
        for (const inbound of rule.inboundNumbers.length ? rule.inboundNumbers : ['']) {
          for (const number of rule.numbers.length ? rule.numbers : ['']) {
            const key = JSON.stringify([pin, trunk, normalizeNumber(inbound), normalizeNumber(number)]);
            const other = seen.get(key);
            if (other) {
              throw invalid(
                `Dispatch rule for the same trunk, inbound number, number, and PIN combination already exists in dispatch rule ${quote(printId(other.sipDispatchRuleId))} ${quote(other.name || '<blank name>')}`,
              );
            }
            seen.set(key, rule);
          }
        }
      }
    }
  }

  /** livekit/sip.go `ListSIPInboundTrunkRequest.Filter` (and the outbound one): by ids, then by numbers. */
  private list<T extends { sipTrunkId: string; numbers: string[] }>(from: Map<string, T>, body: Twirp): T[] {
    const ids = (body.trunkIds ?? []) as string[];
    const numbers = ((body.numbers ?? []) as string[]).map(normalizeNumber);
    return [...from.values()].filter(
      (trunk) =>
        (ids.length === 0 || ids.includes(trunk.sipTrunkId)) &&
        (numbers.length === 0 ||
          trunk.numbers.length === 0 ||
          trunk.numbers.some((number) => numbers.includes(normalizeNumber(number)))),
    );
  }

  /** livekit/sip.go `ListSIPDispatchRuleRequest.Filter`. */
  private listRules(body: Twirp): FakeDispatchRule[] {
    const ids = (body.dispatchRuleIds ?? []) as string[];
    const trunks = (body.trunkIds ?? []) as string[];
    return [...this.rules.values()].filter(
      (rule) =>
        (ids.length === 0 || ids.includes(rule.sipDispatchRuleId)) &&
        (trunks.length === 0 || rule.trunkIds.length === 0 || rule.trunkIds.some((id) => trunks.includes(id))),
    );
  }
}

/**
 * livekit/sip.go `UpdateSIPInboundTrunkRequest.ValidateResult` (and the outbound trunk's and dispatch rule's): the
 * id to update, an action, and a replacement naming no other id.
 */
function updateTarget(body: Twirp, noun: 'trunk' | 'rule', field: 'sipTrunkId' | 'sipDispatchRuleId'): string {
  const id = (body[field] ?? '') as string;
  if (id === '') throw invalid(`${noun} id must be set`);
  if (!body.replace && !body.update) throw invalid('missing or unsupported update action');
  if (body.replace?.[field] && body.replace[field] !== id) {
    throw invalid(`${noun} id in the info must be empty or match the id in the update`);
  }
  return id;
}

/** A dispatch rule as stored, from a create's or a replace's fields. */
function ruleInfo(source: Twirp, id: string): FakeDispatchRule {
  return {
    sipDispatchRuleId: id,
    name: source.name ?? '',
    metadata: source.metadata ?? '',
    trunkIds: source.trunkIds ?? [],
    inboundNumbers: source.inboundNumbers ?? [],
    numbers: source.numbers ?? [],
    rule: source.rule,
    roomConfig: source.roomConfig,
  };
}

/** livekit/types.go `applyListUpdate`: clear, set, or remove then add. */
function applyListUpdate(list: string[], update: Twirp | undefined): string[] {
  if (!update) return list;
  if (update.clear) return [];
  if (update.set?.length) return [...update.set];
  const removed = list.filter((item) => !(update.remove ?? []).includes(item));
  return [...removed, ...(update.add ?? []).filter((item: string) => !removed.includes(item))];
}

/** A Duration as protojson writes it (`"45s"`), in seconds; 0 when unset. */
const durationSeconds = (value: unknown): number => (typeof value === 'string' ? parseFloat(value) : 0);

/** pkg/config/config.go `CheckAttributesSize`: the keys' and values' bytes. */
const attributesBytes = (attributes: Record<string, string> | undefined): number =>
  Object.entries(attributes ?? {}).reduce((total, [key, value]) => total + key.length + value.length, 0);

/** twirp errors.go `InvalidArgumentError(argument, validationMsg)`, as pkg/service/roomservice.go answers limits. */
const limitError = (argument: string, limit: number | string) =>
  new TwirpError('invalid_argument', `${argument} ${limit}`, { argument });

/** livekit/protocol agent/environment.go `MaxDeploymentLength`. */
const MAX_DEPLOYMENT_BYTES = 64;

/**
 * livekit/protocol agent/environment.go `ValidateDeployment`: an agent deployment's name (none is fine), at most 64
 * bytes, no `_` (reserved), no whitespace or control byte. Its error message, or undefined when it is valid.
 */
function deploymentError(deployment: unknown): string | undefined {
  if (typeof deployment !== 'string' || deployment === '') return undefined;
  const bytes = Buffer.from(deployment, 'utf8');
  if (bytes.length > MAX_DEPLOYMENT_BYTES) return `deployment exceeds ${MAX_DEPLOYMENT_BYTES} bytes`;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x5f) return "deployment contains reserved character '_'";
    if (bytes[i] <= 0x20 || bytes[i] === 0x7f) return `deployment contains whitespace or control byte at position ${i}`;
  }
  return undefined;
}

/** pkg/service/auth.go `twirpAuthError(ErrPermissionDenied)`. */
const denied = () => new TwirpError('unauthenticated', 'permissions denied');

/** pkg/service/auth.go `EnsureAdminPermission`: room admin of exactly the room the request names. */
const roomAdmin = (grants: ClaimGrants, room: unknown): boolean =>
  Boolean(grants.video?.roomAdmin) && (grants.video?.room ?? '') === (room ?? '');

/**
 * The grant each method asks for before anything else, as its Ensure*Permission does (pkg/service/auth.go; LiveKit's
 * own test server, cmd/test-server/auth.go `methodPerms`, lists the same). `TransferSIPParticipant` checks its grants
 * after the request's room and identity (`transferParticipant`).
 */
const PERMISSIONS: Record<string, (grants: ClaimGrants, body: Twirp) => boolean> = {
  // pkg/service/sip.go: trunks and dispatch rules `EnsureSIPAdminPermission`.
  ...Object.fromEntries(
    [
      'CreateSIPInboundTrunk',
      'CreateSIPOutboundTrunk',
      'UpdateSIPInboundTrunk',
      'UpdateSIPOutboundTrunk',
      'ListSIPInboundTrunk',
      'ListSIPOutboundTrunk',
      'DeleteSIPTrunk',
      'CreateSIPDispatchRule',
      'UpdateSIPDispatchRule',
      'ListSIPDispatchRule',
      'DeleteSIPDispatchRule',
    ].map((method) => [`SIP/${method}`, (grants: ClaimGrants) => Boolean(grants.sip?.admin)]),
  ),
  // pkg/service/sip.go `CreateSIPParticipantRequest`: `EnsureSIPCallPermission`.
  'SIP/CreateSIPParticipant': (grants) => Boolean(grants.sip?.call),
  'SIP/TransferSIPParticipant': () => true,
  // pkg/service/agent_dispatch_service.go.
  'AgentDispatchService/CreateDispatch': (grants, body) => roomAdmin(grants, body.room),
  'AgentDispatchService/ListDispatch': (grants, body) => roomAdmin(grants, body.room),
  // pkg/service/roomservice.go: `EnsureCreatePermission`, `EnsureListPermission`, `EnsureAdminPermission`, and
  // `EnsureDestRoomPermission` (room admin of the room, with `destinationRoom` the destination).
  'RoomService/CreateRoom': (grants) => Boolean(grants.video?.roomCreate),
  'RoomService/DeleteRoom': (grants) => Boolean(grants.video?.roomCreate),
  'RoomService/ListRooms': (grants) => Boolean(grants.video?.roomList),
  'RoomService/ListParticipants': (grants, body) => roomAdmin(grants, body.room),
  'RoomService/GetParticipant': (grants, body) => roomAdmin(grants, body.room),
  'RoomService/RemoveParticipant': (grants, body) => roomAdmin(grants, body.room),
  'RoomService/MoveParticipant': (grants, body) =>
    roomAdmin(grants, body.room) && (grants.video?.destinationRoom ?? '') === (body.destinationRoom ?? ''),
};

/**
 * livekit/sip.go `TransferSIPParticipantRequest.ValidateResult`: a `sip:`, `sips:` or `tel:` URI, bare or in angle
 * brackets; a SIP URI goes on as `<uri>`, a tel URI bare.
 */
function validTransferTarget(target: string): string {
  if (target === '') throw invalid('missing transfer to');
  const inner = target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target;
  if (!/^(sips?|tel):/.test(inner)) {
    throw invalid('transfer_to must be a valid SIP(s) or TEL URI (sip:, sips: or tel:)');
  }
  return inner.startsWith('tel:') ? inner : `<${inner}>`;
}

/** A participant as livekit.ParticipantInfo's JSON carries it (protojson leaves out `STANDARD`, the enum's zero). */
function participantInfo(participant: FakeParticipant) {
  return {
    sid: participant.participantId,
    identity: participant.participantIdentity,
    name: participant.participantName,
    metadata: participant.participantMetadata,
    state: 'ACTIVE',
    ...(participant.kind === 'STANDARD' ? {} : { kind: participant.kind }),
    attributes: participant.attributes,
    joinedAt: String(Math.floor(participant.joinedAt / 1000)),
    joinedAtMs: String(participant.joinedAt),
  };
}
