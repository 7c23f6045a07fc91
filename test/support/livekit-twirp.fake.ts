import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenVerifier } from 'livekit-server-sdk';

/**
 * LiveKit's Twirp API on 127.0.0.1, as strict as the real server for every call this service makes. Each rule
 * names the file and function of livekit/livekit (`pkg/service/...`) or livekit/protocol (`livekit/...`, `sip/...`)
 * it was read from; messages and codes are the real ones, so an adapter that passes here passes there.
 *
 * It keeps what it holds (trunks, dispatch rules, dispatches, participants) for tests to inspect, and can be told
 * to fail a call: `unavailable` answers 503 without doing anything; `timeout` never answers (the client gives up);
 * `applied-timeout` does the work and then never answers, as a server whose reply is lost does.
 */

export type Twirp = Record<string, any>;
export type FailureMode = 'unavailable' | 'timeout' | 'applied-timeout';

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
  ) {
    super(message);
  }
}

// twitchtv/twirp errors.go `ServerHTTPStatusFromErrorCode`.
const HTTP_STATUS: Record<string, number> = {
  invalid_argument: 400,
  malformed: 400,
  not_found: 404,
  bad_route: 404,
  unauthenticated: 401,
  permission_denied: 403,
  failed_precondition: 412,
  internal: 500,
  unavailable: 503,
};

/** pkg/config/config.go: the default `limit.max_metadata_size`. */
const MAX_METADATA_BYTES = 512 * 1024;

const invalid = (message: string) => new TwirpError('invalid_argument', message);

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
  readonly dispatches: { room: string; agentName: string; metadata: string }[] = [];
  readonly participants: Twirp[] = [];
  /** Every call that reached a method, in order: `Service/Method`, the request as sent, when it took effect. */
  readonly calls: { method: string; body: Twirp; at: number }[] = [];
  /** A network's round trip, half before a call takes effect and half before its answer (for benchmarks). */
  latencyMs = 0;
  private readonly failures: { method: string | undefined; at: number | undefined; mode: FailureMode }[] = [];
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
    const fail = (error: TwirpError) => reply(HTTP_STATUS[error.code] ?? 500, { code: error.code, msg: error.message });
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
      const needs = method === 'SIP/CreateSIPParticipant' ? 'call' : method.startsWith('SIP/') ? 'admin' : 'room';
      // pkg/service/auth.go `EnsureSIPAdminPermission`, `EnsureSIPCallPermission`; twirpAuthError.
      if (needs === 'admin' && !grants.sip?.admin) throw new TwirpError('unauthenticated', 'permissions denied');
      if (needs === 'call' && !grants.sip?.call) throw new TwirpError('unauthenticated', 'permissions denied');
      // pkg/service/auth.go `EnsureAdminPermission`: room admin of exactly the room named in the request.
      if (needs === 'room' && (!grants.video?.roomAdmin || grants.video.room !== body.room)) {
        throw new TwirpError('unauthenticated', 'permissions denied');
      }
      const result = handler(body);
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

  private readonly handlers: Record<string, (body: Twirp) => object> = {
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
    'AgentDispatchService/CreateDispatch': (body) => this.createDispatch(body),
    'AgentDispatchService/ListDispatch': (body) => ({
      agentDispatches: this.dispatches.filter((dispatch) => dispatch.room === body.room),
    }),
    'RoomService/ListParticipants': (body) => ({
      participants: this.participants
        .filter((participant) => participant.roomName === body.room)
        .map((participant) => ({ identity: participant.participantIdentity })),
    }),
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
   * and rpc/sip.go `NewCreateSIPParticipantRequestResult`.
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
      throw new TwirpError('failed_precondition', 'no numbers on outbound trunk');
    }
    const participant = { ...body, participantId: guid('PA_'), sipCallId: guid('SCL_') };
    this.participants.push(participant);
    return {
      participantId: participant.participantId,
      participantIdentity: body.participantIdentity ?? '',
      roomName: body.roomName,
      sipCallId: participant.sipCallId,
    };
  }

  /** pkg/service/agent_dispatch_service.go `CreateDispatch`, with the default LimitConfig's metadata bound. */
  private createDispatch(body: Twirp) {
    if (typeof body.metadata === 'string' && Buffer.byteLength(body.metadata) > MAX_METADATA_BYTES) {
      throw invalid('metadata size exceeds limits');
    }
    const dispatch = {
      id: guid('AD_'),
      room: body.room,
      agentName: body.agentName ?? '',
      metadata: body.metadata ?? '',
    };
    this.dispatches.push(dispatch);
    return dispatch;
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
