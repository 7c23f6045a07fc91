import { CALL_CONTROL, type CallControl, type LocalCallControl } from '@app/telephony';
import { TokenVerifier } from 'livekit-server-sdk';
import { type Stack, startStack } from './support/stack';

/**
 * Call control with CALL_DIALER=local, as the worker has it: every operation recorded in Postgres, where any process
 * (and any test) sees it. The LiveKit adapter is tested against the fake in libs/telephony and
 * telephony-livekit.e2e-spec.ts.
 */
describe('Call control with the local telephony adapter', () => {
  let stack: Stack;
  let control: LocalCallControl;
  beforeAll(async () => {
    stack = await startStack();
    control = stack.worker!.get<symbol, LocalCallControl>(CALL_CONTROL, { strict: false });
  }, 60_000);
  afterAll(() => stack?.close());
  /** What the local adapter recorded for a room, read through the API process's connection. */
  const recorded = (room: string) =>
    stack.dataSource.query(
      `SELECT operation, room, request, outcome FROM local_call_control_requests WHERE room = $1 ORDER BY id`,
      [room],
    );

  it('records each operation the worker is asked for, where every process reads it', async () => {
    await control.createRoom({
      name: 'call-e2e-consult',
      agentDispatch: { agentName: 'voice-assistant', metadata: { external_id: 'call-e2e' } },
    });
    control.answerNext('dialIntoRoom', 'no-answer');
    const dial = await control.dialIntoRoom({
      room: 'call-e2e-consult',
      to: '+14155550199',
      from: '+14155550999',
      outboundTrunkId: 'ST_out1',
      participantIdentity: 'transfer-target',
    });
    expect(dial).toMatchObject({ status: 'failed', reason: 'no-answer' });
    await control.endCall({ room: 'call-e2e-consult' });
    expect(await recorded('call-e2e-consult')).toEqual([
      {
        operation: 'createRoom',
        room: 'call-e2e-consult',
        request: {
          name: 'call-e2e-consult',
          agentDispatch: { agentName: 'voice-assistant', metadata: { external_id: 'call-e2e' } },
        },
        outcome: null,
      },
      expect.objectContaining({ operation: 'dialIntoRoom', outcome: expect.objectContaining({ reason: 'no-answer' }) }),
      { operation: 'endCall', room: 'call-e2e-consult', request: { room: 'call-e2e-consult' }, outcome: null },
    ]);
  });

  it('mints web call tokens with LiveKit’s development key when no LiveKit server is configured', async () => {
    const token = await (control as CallControl).participantToken({ room: 'web-e2e', identity: 'web-1' });
    await expect(new TokenVerifier('devkey', 'secret').verify(token.token)).resolves.toMatchObject({
      sub: 'web-1',
      video: { roomJoin: true, room: 'web-e2e' },
    });
    expect(await recorded('web-e2e')).toEqual([expect.objectContaining({ operation: 'participantToken' })]);
  });
});
