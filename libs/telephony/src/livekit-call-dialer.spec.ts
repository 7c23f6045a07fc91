import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenVerifier } from 'livekit-server-sdk';
import { CallDialError, DialRequest } from './call-dialer';
import { FakeLiveKit } from '../../../test/support/livekit-twirp.fake';
import { CALLEE_IDENTITY, LiveKitCallDialer } from './livekit-call-dialer';
import { LiveKitSipProvisioner } from './livekit-sip-provisioner';

const API_KEY = 'APIdialkey';
const API_SECRET = 'dial-secret-that-is-long-enough-for-hs256';

interface Recorded {
  path: string;
  body: Record<string, unknown>;
  grants: { roomAdmin?: boolean; room?: string; sipCall?: boolean };
}

/**
 * A stand-in for LiveKit's Twirp API on 127.0.0.1: verifies each request's JWT, records the request with the
 * grants it carried, and answers as LiveKit would. `existing` holds what a room already has (for resumed dials).
 */
async function startFakeLiveKit(
  options: { failOn?: string; existing?: { dispatch?: boolean; callee?: boolean } } = {},
) {
  const requests: Recorded[] = [];
  const verifier = new TokenVerifier(API_KEY, API_SECRET);
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', async () => {
      const path = (request.url ?? '').replace('/twirp/livekit.', '');
      const claims = await verifier
        .verify((request.headers.authorization ?? '').replace(/^Bearer /, ''))
        .catch(() => undefined);
      const reply = (status: number, body: object) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (!claims) return reply(401, { code: 'unauthenticated', msg: 'invalid token' });
      const body = JSON.parse(text || '{}');
      requests.push({
        path,
        body,
        grants: { roomAdmin: claims.video?.roomAdmin, room: claims.video?.room, sipCall: claims.sip?.call },
      });
      if (path === options.failOn) return reply(503, { code: 'unavailable', msg: 'no SIP capacity' });
      switch (path) {
        case 'AgentDispatchService/CreateDispatch':
          return reply(200, { id: 'AD_1', agentName: body.agentName, room: body.room, metadata: body.metadata });
        case 'AgentDispatchService/ListDispatch':
          return reply(200, {
            agentDispatches: options.existing?.dispatch
              ? [{ id: 'AD_0', agentName: 'voice-assistant', room: body.room }]
              : [],
          });
        case 'RoomService/ListParticipants':
          return reply(200, { participants: options.existing?.callee ? [{ identity: CALLEE_IDENTITY }] : [] });
        case 'SIP/CreateSIPParticipant':
          return reply(200, {
            participantId: 'PA_1',
            participantIdentity: body.participantIdentity,
            roomName: body.roomName,
          });
        default:
          return reply(404, { code: 'bad_route', msg: path });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const request = (overrides: Partial<DialRequest> = {}): DialRequest => ({
  attemptId: 'call-5f0c',
  callId: 42,
  assistantId: 7,
  to: '+14155550123',
  from: '+14155550999',
  outboundTrunkId: 'ST_out1',
  metadata: { call_id: 42, assistant_id: 7, campaign_id: 3, lead_id: 9, variables: { name: 'Ada' } },
  resumed: false,
  ...overrides,
});

describe('LiveKitCallDialer against a fake of LiveKit’s Twirp API', () => {
  let fake: Awaited<ReturnType<typeof startFakeLiveKit>>;
  afterEach(() => fake.close());
  const dialer = () =>
    new LiveKitCallDialer({ url: fake.url, apiKey: API_KEY, apiSecret: API_SECRET }, 'voice-assistant');

  it('dispatches the agent into the attempt’s room, then rings the callee on the outbound trunk', async () => {
    fake = await startFakeLiveKit();
    await dialer().dial(request());
    const metadata = JSON.stringify({
      call_id: 42,
      assistant_id: 7,
      campaign_id: 3,
      lead_id: 9,
      variables: { name: 'Ada' },
    });
    expect(fake.requests).toEqual([
      {
        path: 'AgentDispatchService/CreateDispatch',
        grants: { roomAdmin: true, room: 'call-5f0c', sipCall: undefined },
        body: { room: 'call-5f0c', agentName: 'voice-assistant', metadata },
      },
      {
        path: 'SIP/CreateSIPParticipant',
        grants: { roomAdmin: undefined, room: undefined, sipCall: true },
        body: {
          sipTrunkId: 'ST_out1',
          sipCallTo: '+14155550123',
          sipNumber: '+14155550999',
          roomName: 'call-5f0c',
          participantIdentity: CALLEE_IDENTITY,
          participantName: '+14155550123',
          participantMetadata: metadata,
          ringingTimeout: '45s',
        },
      },
    ]);
  });

  it('asks what a resumed attempt already did, and places nothing twice', async () => {
    fake = await startFakeLiveKit({ existing: { dispatch: true, callee: true } });
    await dialer().dial(request({ resumed: true }));
    expect(fake.requests.map((recorded) => recorded.path)).toEqual([
      'AgentDispatchService/ListDispatch',
      'RoomService/ListParticipants',
    ]);
  });

  it('finishes a resumed attempt that died between the dispatch and the call', async () => {
    fake = await startFakeLiveKit({ existing: { dispatch: true, callee: false } });
    await dialer().dial(request({ resumed: true }));
    expect(fake.requests.map((recorded) => recorded.path)).toEqual([
      'AgentDispatchService/ListDispatch',
      'RoomService/ListParticipants',
      'SIP/CreateSIPParticipant',
    ]);
  });

  it('reports a refused call as a dial error with LiveKit’s reason', async () => {
    fake = await startFakeLiveKit({ failOn: 'SIP/CreateSIPParticipant' });
    const failure = dialer().dial(request());
    await expect(failure).rejects.toBeInstanceOf(CallDialError);
    await expect(failure).rejects.toThrow(/LiveKit could not place the call: .*no SIP capacity/);
  });

  it('refuses a caller number without an outbound trunk before asking LiveKit anything', async () => {
    fake = await startFakeLiveKit();
    await expect(dialer().dial(request({ outboundTrunkId: null }))).rejects.toThrow(
      'The caller number +14155550999 has no outbound SIP trunk.',
    );
    expect(fake.requests).toEqual([]);
  });

  describe('against the strict fake, which validates as LiveKit does', () => {
    let strict: FakeLiveKit;
    beforeEach(async () => {
      strict = await FakeLiveKit.start();
      fake = { close: () => strict.close() } as typeof fake;
    });

    it('places a call LiveKit accepts: a trunk it holds, a callee, a room, the caller number', async () => {
      const trunkId = await new LiveKitSipProvisioner(strict.settings).createOutboundTrunk({
        name: 'out',
        owner: { deployment: 'd', trunk: 1, createdAt: 0 },
        address: 'sip.carrier.example.com',
        numbers: ['+14155550999'],
        credentials: { username: 'u', password: 'p' },
      });
      await new LiveKitCallDialer(strict.settings, 'voice-assistant').dial(request({ outboundTrunkId: trunkId }));
      expect(strict.dispatches).toEqual([expect.objectContaining({ room: 'call-5f0c', agentName: 'voice-assistant' })]);
      expect(strict.participants).toEqual([
        expect.objectContaining({
          sipTrunkId: trunkId,
          sipCallTo: '+14155550123',
          sipNumber: '+14155550999',
          roomName: 'call-5f0c',
          participantIdentity: CALLEE_IDENTITY,
        }),
      ]);
    });

    it('reports a trunk LiveKit does not hold as a dial error with its reason', async () => {
      await expect(
        new LiveKitCallDialer(strict.settings, 'voice-assistant').dial(request({ outboundTrunkId: 'ST_gone' })),
      ).rejects.toThrow('LiveKit could not place the call: requested sip trunk does not exist');
      expect(strict.participants).toEqual([]);
    });
  });
});
