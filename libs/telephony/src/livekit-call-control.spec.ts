import { AccessToken, SipClient, TokenVerifier } from 'livekit-server-sdk';
import { FakeLiveKit } from '../../../test/support/livekit-twirp.fake';
import { CALL_FAILURE_MESSAGES, CallControlError, transferTarget } from './call-control';
import { LiveKitCallControl } from './livekit-call-control';

const ROOM = 'call-5f0c';
const CALLER = 'sip_+14155550123';

describe('LiveKitCallControl against the strict fake of LiveKit’s Twirp API', () => {
  let fake: FakeLiveKit;
  beforeEach(async () => {
    fake = await FakeLiveKit.start();
  });
  afterEach(() => fake.close());
  const control = () => new LiveKitCallControl(fake.settings, 'voice-assistant');
  /** An inbound call as LiveKit's SIP bridge and the agent make it: the caller and the agent in the call's room. */
  const inboundCall = () => {
    fake.join(ROOM, { identity: 'agent-AJ_1', kind: 'AGENT' });
    return fake.join(ROOM, { identity: CALLER, kind: 'SIP' });
  };
  const failed = (reason: keyof typeof CALL_FAILURE_MESSAGES, sipStatus: unknown = null) => ({
    status: 'failed',
    reason,
    message: CALL_FAILURE_MESSAGES[reason],
    detail: expect.any(String),
    sipStatus,
  });

  describe('transfer (cold, SIP REFER)', () => {
    it('transfers the caller to a number, and the call leaves the room', async () => {
      const caller = inboundCall();
      const mark = fake.calls.length;
      const outcome = await control().transfer({
        room: ROOM,
        participantIdentity: CALLER,
        to: transferTarget({ number: '+14155550199' }),
      });
      expect(outcome).toEqual({ status: 'transferred' });
      expect(fake.calls.slice(mark).map(({ method, body }) => ({ method, body }))).toEqual([
        {
          method: 'SIP/TransferSIPParticipant',
          body: {
            participantIdentity: CALLER,
            roomName: ROOM,
            transferTo: 'tel:+14155550199',
            ringingTimeout: '30s',
          },
        },
      ]);
      expect(fake.transfers).toEqual([
        {
          room: ROOM,
          participantIdentity: CALLER,
          sipCallId: caller.attributes['sip.callID'],
          transferTo: 'tel:+14155550199',
        },
      ]);
      expect(fake.participantsOf(ROOM).map((each) => each.participantIdentity)).toEqual(['agent-AJ_1']);
    });

    it('finds the room’s phone call when no participant is named, and transfers to a SIP URI', async () => {
      inboundCall();
      const outcome = await control().transfer({
        room: ROOM,
        to: transferTarget({ sipUri: 'sip:desk@pbx.example.com' }),
        playDialtone: true,
        ringingTimeoutSeconds: 20,
      });
      expect(outcome).toEqual({ status: 'transferred' });
      expect(fake.methodsSince(0)).toEqual(['RoomService/ListParticipants', 'SIP/TransferSIPParticipant']);
      expect(fake.calls[1].body).toMatchObject({
        participantIdentity: CALLER,
        playDialtone: true,
        ringingTimeout: '20s',
      });
      // LiveKit sends a SIP URI on in angle brackets (livekit/sip.go TransferSIPParticipantRequest.ValidateResult).
      expect(fake.transfers[0].transferTo).toBe('<sip:desk@pbx.example.com>');
    });

    it.each([
      ['busy', 'busy', { code: 486, status: 'Busy Here' }],
      ['declined', 'declined', { code: 603, status: 'Decline' }],
      ['unreachable', 'unreachable', { code: 404, status: 'Not Found' }],
      ['refer-refused', 'refused', { code: 403, status: 'Forbidden' }],
      ['no-answer', 'no-answer', null],
    ] as const)(
      'answers a transfer the SIP bridge reports %s as failed (%s), the caller still in the room',
      async (outcome, reason, sipStatus) => {
        inboundCall();
        fake.sipOutcome('SIP/TransferSIPParticipant', outcome);
        expect(await control().transfer({ room: ROOM, participantIdentity: CALLER, to: 'tel:+14155550199' })).toEqual(
          failed(reason, sipStatus),
        );
        expect(fake.transfers).toEqual([]);
        expect(fake.participantsOf(ROOM).map((each) => each.participantIdentity)).toContain(CALLER);
      },
    );

    it('keeps LiveKit’s own words about the failure as its detail', async () => {
      inboundCall();
      fake.sipOutcome('SIP/TransferSIPParticipant', 'busy');
      const outcome = await control().transfer({ room: ROOM, participantIdentity: CALLER, to: 'tel:+14155550199' });
      expect(outcome).toMatchObject({ detail: expect.stringContaining('486 Busy Here') });
    });

    it('answers caller-gone for a caller who already hung up, and when the room has no phone call', async () => {
      fake.join(ROOM, { identity: 'agent-AJ_1', kind: 'AGENT' });
      expect(await control().transfer({ room: ROOM, participantIdentity: CALLER, to: 'tel:+14155550199' })).toEqual(
        failed('caller-gone'),
      );
      const mark = fake.calls.length;
      expect(await control().transfer({ room: ROOM, to: 'tel:+14155550199' })).toEqual(failed('caller-gone'));
      expect(fake.methodsSince(mark)).toEqual(['RoomService/ListParticipants']);
    });

    it('answers not-a-phone-call for a web call’s person, who has no SIP session to transfer', async () => {
      fake.join(ROOM, { identity: 'web-visitor', kind: 'STANDARD' });
      const outcome = await control().transfer({ room: ROOM, participantIdentity: 'web-visitor', to: 'tel:+1415' });
      expect(outcome).toEqual(failed('not-a-phone-call'));
      expect(outcome).toMatchObject({ detail: 'twirp error unknown: no SIP session associated with participant' });
    });

    it('answers a provider failure as failed with LiveKit’s reason, never throwing', async () => {
      inboundCall();
      fake.failNext('SIP/TransferSIPParticipant', 'unavailable');
      expect(
        await control().transfer({ room: ROOM, participantIdentity: CALLER, to: 'tel:+14155550199' }),
      ).toMatchObject({ ...failed('provider-error'), detail: 'service temporarily unavailable' });
      // A destination LiveKit cannot take is LiveKit refusing the request.
      expect(await control().transfer({ room: ROOM, participantIdentity: CALLER, to: '+14155550199' })).toMatchObject({
        ...failed('provider-error'),
        detail: 'transfer_to must be a valid SIP(s) or TEL URI (sip:, sips: or tel:)',
      });
    });

    it('refuses a ringing timeout out of bounds before asking LiveKit', async () => {
      await expect(
        control().transfer({ room: ROOM, participantIdentity: CALLER, to: 'tel:+1', ringingTimeoutSeconds: 121 }),
      ).rejects.toThrow(RangeError);
      expect(fake.calls).toEqual([]);
    });
  });

  describe('dialIntoRoom (a warm transfer’s consultation call)', () => {
    let trunkId: string;
    beforeEach(async () => {
      trunkId = (
        await new SipClient(fake.url, fake.apiKey, fake.apiSecret).createSipOutboundTrunk(
          'carrier',
          'sip.carrier.example.com',
          ['+14155550999'],
        )
      ).sipTrunkId;
    });
    const dial = (overrides: Record<string, unknown> = {}) =>
      control().dialIntoRoom({
        room: `${ROOM}-consult`,
        to: '+14155550199',
        from: '+14155550999',
        outboundTrunkId: trunkId,
        participantIdentity: 'transfer-target',
        metadata: { external_id: ROOM, transfer: 'sales' },
        ...overrides,
      });

    it('rings the person into the room and answers once they answered', async () => {
      const mark = fake.calls.length;
      const outcome = await dial();
      const [person] = fake.participantsOf(`${ROOM}-consult`);
      expect(outcome).toEqual({
        status: 'answered',
        participantIdentity: 'transfer-target',
        sipCallId: person.attributes['sip.callID'],
      });
      expect(fake.calls.slice(mark).map(({ method, body }) => ({ method, body }))).toEqual([
        {
          method: 'SIP/CreateSIPParticipant',
          body: {
            sipTrunkId: trunkId,
            sipCallTo: '+14155550199',
            sipNumber: '+14155550999',
            roomName: `${ROOM}-consult`,
            participantIdentity: 'transfer-target',
            participantName: '+14155550199',
            participantMetadata: JSON.stringify({ external_id: ROOM, transfer: 'sales' }),
            ringingTimeout: '30s',
            waitUntilAnswered: true,
          },
        },
      ]);
      expect(person).toMatchObject({ kind: 'SIP', participantIdentity: 'transfer-target' });
    });

    it('answers ringing without waiting, when asked not to wait', async () => {
      expect(await dial({ waitUntilAnswered: false, dtmf: 'ww123#' })).toMatchObject({ status: 'ringing' });
      expect(fake.calls.at(-1)?.body).toMatchObject({ dtmf: 'ww123#' });
      expect(fake.calls.at(-1)?.body.waitUntilAnswered).toBeUndefined();
    });

    it.each([
      ['busy', 'busy', { code: 486, status: 'Busy Here' }],
      ['declined', 'declined', { code: 603, status: 'Decline' }],
      ['unreachable', 'unreachable', { code: 404, status: 'Not Found' }],
      ['no-answer', 'no-answer', null],
    ] as const)(
      'answers a call the person’s phone ends %s as failed (%s), nobody left in the room',
      async (outcome, reason, sipStatus) => {
        fake.sipOutcome('SIP/CreateSIPParticipant', outcome);
        expect(await dial()).toEqual(failed(reason, sipStatus));
        expect(fake.participantsOf(`${ROOM}-consult`)).toEqual([]);
      },
    );

    it('answers a carrier’s failure as the network’s, and a trunk LiveKit does not hold as a provider error', async () => {
      fake.sipOutcome('SIP/CreateSIPParticipant', { code: 503, status: 'Service Unavailable' });
      expect(await dial()).toEqual(failed('provider-error', { code: 503, status: 'Service Unavailable' }));
      expect(await dial({ outboundTrunkId: 'ST_gone' })).toMatchObject({
        ...failed('provider-error'),
        detail: 'requested sip trunk does not exist',
      });
    });

    it('refuses a ringing timeout LiveKit would not wait for before asking it', async () => {
      const mark = fake.calls.length;
      await expect(dial({ ringingTimeoutSeconds: 61 })).rejects.toThrow(RangeError);
      await expect(dial({ ringingTimeoutSeconds: 2.5 })).rejects.toThrow(RangeError);
      expect(fake.calls.length).toBe(mark);
    });
  });

  describe('moveParticipant', () => {
    const consultation = () => {
      inboundCall();
      fake.join(`${ROOM}-consult`, { identity: 'transfer-target', kind: 'SIP' });
    };

    it('moves the briefed person into the caller’s room', async () => {
      consultation();
      await control().moveParticipant({ fromRoom: `${ROOM}-consult`, identity: 'transfer-target', toRoom: ROOM });
      expect(fake.participantsOf(ROOM).map((each) => each.participantIdentity)).toEqual([
        'agent-AJ_1',
        CALLER,
        'transfer-target',
      ]);
      expect(fake.participantsOf(`${ROOM}-consult`)).toEqual([]);
      expect(fake.calls.at(-1)?.body).toEqual({
        room: `${ROOM}-consult`,
        identity: 'transfer-target',
        destinationRoom: ROOM,
      });
    });

    it('throws not-found for a person who hung up, or a caller’s room that is gone', async () => {
      consultation();
      const move = (identity: string, toRoom: string) =>
        control().moveParticipant({ fromRoom: `${ROOM}-consult`, identity, toRoom });
      await expect(move('nobody', ROOM)).rejects.toMatchObject({ name: 'CallControlError', reason: 'not-found' });
      await expect(move('transfer-target', 'call-gone')).rejects.toMatchObject({ reason: 'not-found' });
    });

    it('throws unsupported against a self-hosted LiveKit server, which does not move participants', async () => {
      consultation();
      fake.selfHosted = true;
      const move = control().moveParticipant({
        fromRoom: `${ROOM}-consult`,
        identity: 'transfer-target',
        toRoom: ROOM,
      });
      await expect(move).rejects.toBeInstanceOf(CallControlError);
      await expect(move).rejects.toMatchObject({
        reason: 'unsupported',
        message: 'LiveKit could not move the participant: twirp error unknown: not implemented',
      });
    });
  });

  describe('removeParticipant', () => {
    it('disconnects the participant, and a participant already gone is no error', async () => {
      inboundCall();
      await control().removeParticipant({ room: ROOM, identity: CALLER });
      expect(fake.participantsOf(ROOM).map((each) => each.participantIdentity)).toEqual(['agent-AJ_1']);
      await expect(control().removeParticipant({ room: ROOM, identity: CALLER })).resolves.toBeUndefined();
    });

    it('throws a provider failure', async () => {
      fake.failNext('RoomService/RemoveParticipant', 'unavailable');
      await expect(control().removeParticipant({ room: ROOM, identity: CALLER })).rejects.toMatchObject({
        reason: 'provider-error',
      });
    });
  });

  describe('createRoom', () => {
    it('makes the room with the agent dispatched into it, and leaves a room that exists as it is', async () => {
      const request = {
        name: `${ROOM}-consult`,
        emptyTimeoutSeconds: 120,
        agentDispatch: { agentName: 'voice-assistant', metadata: { external_id: ROOM, role: 'briefing' } },
      };
      await control().createRoom(request);
      await control().createRoom(request);
      expect(fake.rooms.get(`${ROOM}-consult`)).toMatchObject({ emptyTimeout: 120, metadata: '' });
      expect(fake.dispatches).toEqual([
        {
          id: expect.stringMatching(/^AD_/),
          room: `${ROOM}-consult`,
          agentName: 'voice-assistant',
          metadata: JSON.stringify({ external_id: ROOM, role: 'briefing' }),
        },
      ]);
    });

    it('throws what LiveKit refuses, in its words', async () => {
      await expect(control().createRoom({ name: 'x'.repeat(257) })).rejects.toMatchObject({
        reason: 'provider-error',
        message:
          'LiveKit could not create the room: twirp error unknown: room name length exceeds limits: max length 256',
      });
      await expect(control().createRoom({ name: ROOM, metadata: 'x'.repeat(512 * 1024 + 1) })).rejects.toThrow(
        'LiveKit could not create the room: metadata size exceeds limits 524288',
      );
      expect(fake.rooms.size).toBe(0);
    });
  });

  describe('endCall', () => {
    it('deletes the room, which disconnects everyone and ends its dispatches; a room already gone is ended', async () => {
      await control().startWebCall({ room: ROOM, metadata: { external_id: ROOM } });
      inboundCall();
      await control().endCall({ room: ROOM });
      expect(fake.rooms.has(ROOM)).toBe(false);
      expect(fake.participantsOf(ROOM)).toEqual([]);
      expect(fake.dispatches).toEqual([]);
      await expect(control().endCall({ room: ROOM })).resolves.toBeUndefined();
    });

    it('throws a provider failure, so the hang-up can be tried again', async () => {
      fake.failNext('RoomService/DeleteRoom', 'unavailable');
      await expect(control().endCall({ room: ROOM })).rejects.toMatchObject({
        name: 'CallControlError',
        reason: 'provider-error',
        message: 'LiveKit could not end the call: service temporarily unavailable',
      });
    });
  });

  describe('web calls', () => {
    it('makes the room with the configured agent dispatched, its metadata in the dispatch and not the room', async () => {
      await control().startWebCall({ room: ROOM, metadata: { external_id: ROOM, variables: { name: 'Ada' } } });
      expect(fake.calls.map(({ method, body }) => ({ method, body }))).toEqual([
        {
          method: 'RoomService/CreateRoom',
          body: {
            name: ROOM,
            emptyTimeout: 600,
            agents: [
              {
                agentName: 'voice-assistant',
                metadata: JSON.stringify({ external_id: ROOM, variables: { name: 'Ada' } }),
              },
            ],
          },
        },
      ]);
      expect(fake.rooms.get(ROOM)?.metadata).toBe('');
      expect(fake.dispatches).toEqual([expect.objectContaining({ room: ROOM, agentName: 'voice-assistant' })]);
    });

    it('dispatches the agent a web call names', async () => {
      await control().startWebCall({ room: ROOM, metadata: {}, agentName: 'sales-agent' });
      expect(fake.dispatches.map((dispatch) => dispatch.agentName)).toEqual(['sales-agent']);
    });

    it('mints a token that may join that room only, publish and subscribe, for at most ten minutes', async () => {
      const issued = Math.floor(Date.now() / 1000);
      const token = await control().participantToken({
        room: ROOM,
        identity: 'web-7f3a',
        name: 'Visitor',
        ttlSeconds: 300,
        metadata: '{"call_id":42}',
      });
      const claims = await new TokenVerifier(fake.apiKey, fake.apiSecret).verify(token.token);
      expect(claims.video).toEqual({
        roomJoin: true,
        room: ROOM,
        canPublish: true,
        canSubscribe: true,
        canPublishData: true,
      });
      expect(claims).toMatchObject({ sub: 'web-7f3a', name: 'Visitor', metadata: '{"call_id":42}' });
      expect(claims.sip).toBeUndefined();
      expect(claims.exp! - claims.nbf!).toBe(300);
      expect(claims.exp! - issued).toBeGreaterThanOrEqual(300);
      expect(token.expiresAt).toEqual(new Date(claims.exp! * 1000));
      expect(token.url).toBe(fake.url.replace('http://', 'ws://'));
      // Minting asks LiveKit nothing.
      expect(fake.calls).toEqual([]);
    });

    it('mints tokens for ten minutes by default, and never longer', async () => {
      const token = await control().participantToken({ room: ROOM, identity: 'web-7f3a' });
      const claims = await new TokenVerifier(fake.apiKey, fake.apiSecret).verify(token.token);
      expect(claims.exp! - claims.nbf!).toBe(600);
      await expect(control().participantToken({ room: ROOM, identity: 'web-7f3a', ttlSeconds: 601 })).rejects.toThrow(
        RangeError,
      );
    });

    it('refuses a token LiveKit would not let join: no identity, or a name longer than LiveKit takes', async () => {
      await expect(control().participantToken({ room: ROOM, identity: '' })).rejects.toThrow(RangeError);
      await expect(control().participantToken({ room: ROOM, identity: 'x'.repeat(257) })).rejects.toThrow(
        'identity must be 1 to 256 bytes to join a room',
      );
      await expect(control().participantToken({ room: 'r'.repeat(257), identity: 'web-7f3a' })).rejects.toThrow(
        'room must be 1 to 256 bytes to join a room',
      );
    });
  });
});

describe('The LiveKit fake holds the real server’s grants and rules', () => {
  let fake: FakeLiveKit;
  beforeEach(async () => {
    fake = await FakeLiveKit.start();
  });
  afterEach(() => fake.close());
  const post = async (method: string, body: object, grants: Parameters<AccessToken['addGrant']>[0], sip = {}) => {
    const token = new AccessToken(fake.apiKey, fake.apiSecret, { ttl: 60 });
    token.addGrant(grants);
    token.addSIPGrant(sip);
    const response = await fetch(`${fake.url}/twirp/livekit.${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token.toJwt()}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const denied = { status: 401, body: { code: 'unauthenticated', msg: 'permissions denied' } };

  it('moves a participant only with room admin of its room and the destination room named', async () => {
    fake.join('a', { identity: 'p' });
    fake.join('b', { identity: 'q' });
    const move = { room: 'a', identity: 'p', destinationRoom: 'b' };
    expect(await post('RoomService/MoveParticipant', move, { roomAdmin: true, room: 'a' })).toEqual(denied);
    expect(
      await post('RoomService/MoveParticipant', move, { roomAdmin: true, room: 'b', destinationRoom: 'b' }),
    ).toEqual(denied);
    expect(
      await post(
        'RoomService/MoveParticipant',
        { ...move, destinationRoom: 'a' },
        {
          roomAdmin: true,
          room: 'a',
          destinationRoom: 'a',
        },
      ),
    ).toEqual({
      status: 400,
      body: {
        code: 'invalid_argument',
        msg: 'destination room cannot be the same as source room ',
        meta: { argument: 'destination room cannot be the same as source room' },
      },
    });
    expect(
      await post('RoomService/MoveParticipant', move, { roomAdmin: true, room: 'a', destinationRoom: 'b' }),
    ).toEqual({ status: 200, body: {} });
  });

  it('makes and deletes rooms with roomCreate only, and lists them with roomList only', async () => {
    expect(await post('RoomService/CreateRoom', { name: 'a' }, { roomAdmin: true, room: 'a' })).toEqual(denied);
    expect((await post('RoomService/CreateRoom', { name: 'a' }, { roomCreate: true })).status).toBe(200);
    expect(await post('RoomService/ListRooms', {}, { roomCreate: true })).toEqual(denied);
    expect((await post('RoomService/ListRooms', {}, { roomList: true })).body).toMatchObject({
      rooms: [{ name: 'a', emptyTimeout: 300, departureTimeout: 20 }],
    });
    expect(await post('RoomService/DeleteRoom', { room: 'a' }, { roomAdmin: true, room: 'a' })).toEqual(denied);
    expect(await post('RoomService/DeleteRoom', { room: 'a' }, { roomCreate: true })).toEqual({
      status: 200,
      body: {},
    });
    expect(await post('RoomService/DeleteRoom', { room: 'a' }, { roomCreate: true })).toEqual({
      status: 404,
      body: { code: 'not_found', msg: 'twirp error unknown: requested room does not exist' },
    });
  });

  it('checks a transfer’s room and participant before its grants, then SIP call and room admin of that room', async () => {
    fake.join('a', { identity: 'caller', kind: 'SIP' });
    const transfer = { roomName: 'a', participantIdentity: 'caller', transferTo: 'tel:+14155550199' };
    expect(await post('SIP/TransferSIPParticipant', { ...transfer, roomName: '' }, {})).toEqual({
      status: 400,
      body: { code: 'invalid_argument', msg: 'twirp error unknown: Missing room name' },
    });
    expect(await post('SIP/TransferSIPParticipant', transfer, { roomAdmin: true, room: 'a' })).toEqual(denied);
    expect(await post('SIP/TransferSIPParticipant', transfer, { roomAdmin: true, room: 'b' }, { call: true })).toEqual(
      denied,
    );
    expect(
      await post(
        'SIP/TransferSIPParticipant',
        { ...transfer, participantIdentity: 'nobody' },
        { roomAdmin: true, room: 'a' },
        {
          call: true,
        },
      ),
    ).toEqual({ status: 404, body: { code: 'not_found', msg: 'twirp error unknown: participant does not exist' } });
    fake.sipOutcome('SIP/TransferSIPParticipant', 'busy');
    expect(await post('SIP/TransferSIPParticipant', transfer, { roomAdmin: true, room: 'a' }, { call: true })).toEqual({
      status: 429,
      body: {
        code: 'resource_exhausted',
        msg: 'twirp error unknown: call transfer failed: sip status: 486: Busy Here',
        meta: { sip_status_code: '486', sip_status: 'Busy Here' },
      },
    });
  });

  it('refuses to transfer a call not yet answered, as the SIP bridge does', async () => {
    fake.join('a', { identity: 'callee', kind: 'SIP', attributes: { 'sip.callStatus': 'dialing' } });
    const transfer = { roomName: 'a', participantIdentity: 'callee', transferTo: 'tel:+14155550199' };
    expect(await post('SIP/TransferSIPParticipant', transfer, { roomAdmin: true, room: 'a' }, { call: true })).toEqual({
      status: 412,
      body: { code: 'failed_precondition', msg: "twirp error unknown: can't transfer non established call" },
    });
  });

  it('answers a dial that rings longer than LiveKit waits with its own deadline, not the bridge’s', async () => {
    const trunk = await new SipClient(fake.url, fake.apiKey, fake.apiSecret).createSipOutboundTrunk(
      'carrier',
      'sip.carrier.example.com',
      ['+14155550999'],
    );
    const dial = (ringingTimeout: string) => ({
      sipTrunkId: trunk.sipTrunkId,
      sipCallTo: '+14155550199',
      roomName: 'a',
      waitUntilAnswered: true,
      ringingTimeout,
    });
    fake.sipOutcome('SIP/CreateSIPParticipant', 'no-answer', 2);
    expect(await post('SIP/CreateSIPParticipant', dial('30s'), {}, { call: true })).toEqual({
      status: 408,
      body: { code: 'canceled', msg: 'twirp error unknown: sip request timed out' },
    });
    expect(await post('SIP/CreateSIPParticipant', dial('90s'), {}, { call: true })).toEqual({
      status: 408,
      body: { code: 'deadline_exceeded', msg: 'twirp error unknown: request timed out' },
    });
  });

  it('lists a room’s dispatches only while the room exists', async () => {
    expect(await post('AgentDispatchService/ListDispatch', { room: 'a' }, { roomAdmin: true, room: 'a' })).toEqual({
      status: 503,
      body: { code: 'unavailable', msg: 'twirp error unknown: no response from servers' },
    });
    await post('AgentDispatchService/CreateDispatch', { room: 'a', agentName: 'x' }, { roomAdmin: true, room: 'a' });
    expect(
      (await post('AgentDispatchService/ListDispatch', { room: 'a' }, { roomAdmin: true, room: 'a' })).body,
    ).toMatchObject({ agentDispatches: [{ room: 'a', agentName: 'x' }] });
  });
});
