import { TokenVerifier } from 'livekit-server-sdk';
import { CALL_FAILURE_MESSAGES, CallControlError } from './call-control';
import { type CallControlRecord, LocalCallControl } from './local-call-control';

describe('LocalCallControl', () => {
  let records: CallControlRecord[];
  let control: LocalCallControl;
  beforeEach(() => {
    records = [];
    control = new LocalCallControl({
      log: { record: async (entry) => void records.push(entry) },
      agentName: 'voice-assistant',
    });
  });
  const dial = () =>
    control.dialIntoRoom({
      room: 'call-1-consult',
      to: '+14155550199',
      from: '+14155550999',
      outboundTrunkId: 'ST_out1',
      participantIdentity: 'transfer-target',
    });

  it('connects every transfer and dial, recording each with its outcome', async () => {
    expect(await control.transfer({ room: 'call-1', to: 'tel:+14155550199' })).toEqual({ status: 'transferred' });
    expect(await dial()).toEqual({
      status: 'answered',
      participantIdentity: 'transfer-target',
      sipCallId: expect.stringMatching(/^SCL_/),
    });
    expect(records).toEqual([
      {
        operation: 'transfer',
        room: 'call-1',
        request: { room: 'call-1', to: 'tel:+14155550199' },
        outcome: { status: 'transferred' },
      },
      expect.objectContaining({ operation: 'dialIntoRoom', room: 'call-1-consult', outcome: expect.any(Object) }),
    ]);
  });

  it('ends the next transfers and dials as it is told, a person declining or a phone ringing out', async () => {
    control.answerNext('transfer', 'busy');
    control.answerNext('dialIntoRoom', 'declined', 2);
    expect(await control.transfer({ room: 'call-1', to: 'tel:+1' })).toMatchObject({
      status: 'failed',
      reason: 'busy',
      message: CALL_FAILURE_MESSAGES.busy,
    });
    expect(await control.transfer({ room: 'call-1', to: 'tel:+1' })).toEqual({ status: 'transferred' });
    expect(await dial()).toMatchObject({ status: 'failed', reason: 'declined' });
    expect(await dial()).toMatchObject({ status: 'failed', reason: 'declined' });
    expect(await dial()).toMatchObject({ status: 'answered' });
    expect(records[0].outcome).toMatchObject({ status: 'failed', reason: 'busy' });
  });

  it('records the room operations, and fails the next ones it is told to, recording the failure', async () => {
    await control.createRoom({ name: 'call-1-consult', emptyTimeoutSeconds: 60 });
    await control.moveParticipant({ fromRoom: 'call-1-consult', identity: 'transfer-target', toRoom: 'call-1' });
    await control.removeParticipant({ room: 'call-1', identity: 'agent' });
    await control.startWebCall({ room: 'web-1', metadata: { external_id: 'web-1' } });
    control.failNext('endCall', 'provider-error');
    control.failNext('moveParticipant', 'unsupported');
    const ending = control.endCall({ room: 'call-1' });
    await expect(ending).rejects.toBeInstanceOf(CallControlError);
    await expect(ending).rejects.toMatchObject({ reason: 'provider-error' });
    await expect(
      control.moveParticipant({ fromRoom: 'call-1-consult', identity: 'transfer-target', toRoom: 'call-1' }),
    ).rejects.toMatchObject({ reason: 'unsupported' });
    await control.endCall({ room: 'call-1' });
    expect(records.map(({ operation, room, outcome }) => [operation, room, outcome])).toEqual([
      ['createRoom', 'call-1-consult', null],
      ['moveParticipant', 'call-1-consult', null],
      ['removeParticipant', 'call-1', null],
      ['startWebCall', 'web-1', null],
      ['endCall', 'call-1', { failed: 'provider-error' }],
      ['moveParticipant', 'call-1-consult', { failed: 'unsupported' }],
      ['endCall', 'call-1', null],
    ]);
    // A web call that names no agent dispatches the configured one.
    expect(records[3].request).toEqual({
      room: 'web-1',
      metadata: { external_id: 'web-1' },
      agentName: 'voice-assistant',
    });
  });

  it('mints real participant tokens with LiveKit’s development key, recording who may join where but not the token', async () => {
    const token = await control.participantToken({ room: 'web-1', identity: 'web-7f3a', ttlSeconds: 120 });
    const claims = await new TokenVerifier('devkey', 'secret').verify(token.token);
    expect(claims.video).toEqual({
      roomJoin: true,
      room: 'web-1',
      canPublish: true,
      canSubscribe: true,
      canPublishData: true,
    });
    expect(claims.exp! - claims.nbf!).toBe(120);
    expect(token.url).toBe('ws://localhost:7880');
    expect(records).toEqual([
      {
        operation: 'participantToken',
        room: 'web-1',
        request: { room: 'web-1', identity: 'web-7f3a', ttlSeconds: 120 },
        outcome: { expires_at: token.expiresAt.toISOString() },
      },
    ]);
    expect(JSON.stringify(records)).not.toContain(token.token);
  });

  it('signs with the configured LiveKit key when there is one', async () => {
    const configured = new LocalCallControl({
      log: { record: async () => undefined },
      agentName: 'voice-assistant',
      livekit: { url: 'https://lk.example.com', apiKey: 'APIkey', apiSecret: 'a-secret-long-enough-for-hs256-signing' },
    });
    const token = await configured.participantToken({ room: 'web-1', identity: 'web-7f3a' });
    await expect(
      new TokenVerifier('APIkey', 'a-secret-long-enough-for-hs256-signing').verify(token.token),
    ).resolves.toMatchObject({ sub: 'web-7f3a' });
    expect(token.url).toBe('wss://lk.example.com');
  });
});
