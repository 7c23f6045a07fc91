import { FakeLiveKit } from '../../../test/support/livekit-twirp.fake';
import { CallDialError, type DialRequest } from './call-dialer';
import { CALLEE_IDENTITY, LiveKitCallDialer } from './livekit-call-dialer';
import { LiveKitSipProvisioner } from './livekit-sip-provisioner';

const request = (overrides: Partial<DialRequest> = {}): DialRequest => ({
  attemptId: 'call-5f0c',
  callId: 42,
  assistantId: 7,
  to: '+14155550123',
  from: '+14155550999',
  outboundTrunkId: 'ST_out1',
  metadata: {
    external_id: 'call-5f0c',
    call_id: 42,
    assistant_id: 7,
    campaign_id: 3,
    lead_id: 9,
    variables: { name: 'Ada' },
  },
  resumed: false,
  ...overrides,
});

describe('LiveKitCallDialer against the strict fake of LiveKit’s Twirp API', () => {
  let fake: FakeLiveKit;
  let trunkId: string;
  beforeEach(async () => {
    fake = await FakeLiveKit.start();
    trunkId = await new LiveKitSipProvisioner(fake.settings).createOutboundTrunk({
      name: 'out',
      owner: { deployment: 'd', trunk: 1, createdAt: 0 },
      address: 'sip.carrier.example.com',
      numbers: ['+14155550999'],
      credentials: { username: 'u', password: 'p' },
    });
  });
  afterEach(() => fake.close());
  const dialer = () => new LiveKitCallDialer(fake.settings, 'voice-assistant');
  const dialCalls = () => fake.calls.filter((call) => call.method !== 'SIP/CreateSIPOutboundTrunk');
  const metadata = JSON.stringify(request().metadata);

  it('dispatches the agent into the attempt’s room, then rings the callee on the outbound trunk, as LiveKit accepts', async () => {
    await dialer().dial(request({ outboundTrunkId: trunkId }));
    expect(dialCalls().map(({ method, body }) => ({ method, body }))).toEqual([
      {
        method: 'AgentDispatchService/CreateDispatch',
        body: { room: 'call-5f0c', agentName: 'voice-assistant', metadata },
      },
      {
        method: 'SIP/CreateSIPParticipant',
        body: {
          sipTrunkId: trunkId,
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
    expect(fake.dispatches).toEqual([expect.objectContaining({ room: 'call-5f0c', agentName: 'voice-assistant' })]);
    expect(fake.participants).toEqual([expect.objectContaining({ sipTrunkId: trunkId, roomName: 'call-5f0c' })]);
  });

  it('tells the agent, in the dispatch’s metadata and the callee’s, the external id to open the call’s session under', async () => {
    await dialer().dial(request({ outboundTrunkId: trunkId }));
    const [dispatch] = fake.dispatches;
    expect(JSON.parse(dispatch.metadata)).toMatchObject({ external_id: 'call-5f0c', call_id: 42 });
    expect(JSON.parse(dispatch.metadata).external_id).toBe(dispatch.room);
    expect(JSON.parse(fake.participants[0].participantMetadata as string)).toMatchObject({ external_id: 'call-5f0c' });
  });

  it('asks what a resumed attempt already did, and places nothing twice', async () => {
    await dialer().dial(request({ outboundTrunkId: trunkId }));
    await dialer().dial(request({ outboundTrunkId: trunkId, resumed: true }));
    expect(dialCalls().map((call) => call.method)).toEqual([
      'AgentDispatchService/CreateDispatch',
      'SIP/CreateSIPParticipant',
      'AgentDispatchService/ListDispatch',
      'RoomService/ListParticipants',
    ]);
    expect(fake.participants).toHaveLength(1);
  });

  it('finishes a resumed attempt that died between the dispatch and the call', async () => {
    fake.failNext('SIP/CreateSIPParticipant', 'unavailable');
    await expect(dialer().dial(request({ outboundTrunkId: trunkId }))).rejects.toBeInstanceOf(CallDialError);
    await dialer().dial(request({ outboundTrunkId: trunkId, resumed: true }));
    expect(dialCalls().map((call) => call.method)).toEqual([
      'AgentDispatchService/CreateDispatch',
      'SIP/CreateSIPParticipant',
      'AgentDispatchService/ListDispatch',
      'RoomService/ListParticipants',
      'SIP/CreateSIPParticipant',
    ]);
    expect(fake.dispatches).toHaveLength(1);
    expect(fake.participants).toHaveLength(1);
  });

  it('reports a refused call as a dial error with LiveKit’s reason', async () => {
    fake.failNext('SIP/CreateSIPParticipant', 'unavailable');
    const failure = dialer().dial(request({ outboundTrunkId: trunkId }));
    await expect(failure).rejects.toBeInstanceOf(CallDialError);
    await expect(failure).rejects.toThrow('LiveKit could not place the call: service temporarily unavailable');
  });

  it('reports a trunk LiveKit does not hold as a dial error with its reason', async () => {
    await expect(dialer().dial(request({ outboundTrunkId: 'ST_gone' }))).rejects.toThrow(
      'LiveKit could not place the call: requested sip trunk does not exist',
    );
    expect(fake.participants).toEqual([]);
  });

  it('refuses a caller number without an outbound trunk before asking LiveKit anything', async () => {
    await expect(dialer().dial(request({ outboundTrunkId: null }))).rejects.toThrow(
      'The caller number +14155550999 cannot place calls: it has no outbound SIP trunk.',
    );
    expect(dialCalls()).toEqual([]);
  });
});
