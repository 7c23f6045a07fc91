import { FakeLiveKit } from '../../../test/support/livekit-twirp.fake';
import { INBOUND_EXTERNAL_ID, LiveKitSipProvisioner } from './livekit-sip-provisioner';
import { type InboundTrunkSpec, ownerOf, SipProvisioningError, type TrunkOwner } from './sip-provisioner';

const owner: TrunkOwner = { deployment: 'dep-1', trunk: 7, createdAt: 1_700_000_000_000 };

const inboundSpec = (overrides: Partial<InboundTrunkSpec> = {}): InboundTrunkSpec => ({
  name: 'trunk-7-inbound',
  owner,
  dispatch: {
    agentName: 'voice-assistant',
    metadata: { assistant_id: 3, phone_number_id: 7, phone_number: '+14155550100' },
  },
  numbers: ['+14155550100'],
  credentials: { username: 'acme', password: 'secret' },
  ...overrides,
});

describe('LiveKitSipProvisioner against the strict fake of LiveKit’s Twirp API', () => {
  let fake: FakeLiveKit;
  let provisioner: LiveKitSipProvisioner;

  beforeEach(async () => {
    fake = await FakeLiveKit.start();
    provisioner = new LiveKitSipProvisioner({ ...fake.settings, requestTimeoutSeconds: 2 });
  });
  afterEach(() => fake.close());

  it('creates an inbound trunk and a dispatch rule that dispatches the named agent, both tagged with their owner', async () => {
    const inbound = await provisioner.createInboundTrunk(inboundSpec());
    const trunk = fake.inbound.get(inbound.trunkId)!;
    expect(trunk).toMatchObject({ numbers: ['+14155550100'], authUsername: 'acme', authPassword: 'secret' });
    expect(ownerOf(trunk.metadata)).toEqual(owner);
    const rule = fake.rules.get(inbound.dispatchRuleId)!;
    expect(rule).toMatchObject({
      trunkIds: [inbound.trunkId],
      name: 'trunk-7-inbound dispatch',
      rule: { dispatchRuleIndividual: { roomPrefix: 'call-' } },
      roomConfig: {
        agents: [
          {
            agentName: 'voice-assistant',
            metadata: JSON.stringify({
              assistant_id: 3,
              phone_number_id: 7,
              phone_number: '+14155550100',
              external_id: '{room}',
            }),
          },
        ],
      },
    });
    expect(JSON.parse(rule.metadata)).toMatchObject({
      assistant_id: 3,
      phone_number: '+14155550100',
      external_id: INBOUND_EXTERNAL_ID,
    });
    expect(ownerOf(rule.metadata)).toEqual(owner);
  });

  it('says in the rule’s metadata that an inbound call’s external id is the name of the room LiveKit makes for it', async () => {
    const inbound = await provisioner.createInboundTrunk(inboundSpec());
    const call = () => fake.inboundCall({ trunkId: inbound.trunkId, from: '+14155550123', to: '+14155550100' });
    const first = call();
    // sip/sip.go `EvaluateDispatchRule`: `<roomPrefix>_<caller>_<12 base57 characters>`, the caller's `+` kept.
    expect(first.roomName).toMatch(/^call-_\+14155550123_[2-9A-HJ-NP-Za-km-z]{12}$/);
    expect(call().roomName).not.toBe(first.roomName);
    expect(JSON.parse(first.participantMetadata)).toMatchObject({ external_id: '{room}', assistant_id: 3 });
    expect(first.agents).toEqual([expect.objectContaining({ agentName: 'voice-assistant' })]);

    await provisioner.updateInboundDispatch(inbound, {
      ...inboundSpec(),
      dispatch: { agentName: 'voice-assistant', metadata: { ...inboundSpec().dispatch.metadata, assistant_id: 4 } },
    });
    expect(JSON.parse(call().participantMetadata)).toMatchObject({ external_id: '{room}', assistant_id: 4 });
  });

  it('meets LiveKit’s refusal of a second inbound trunk on a number, and leaves nothing of it behind', async () => {
    await provisioner.createInboundTrunk(inboundSpec());
    const error = await provisioner.createInboundTrunk(inboundSpec({ name: 'other' })).catch((e: Error) => e);
    expect(error).toBeInstanceOf(SipProvisioningError);
    expect((error as Error).message).toMatch(
      /^LiveKit could not create the inbound trunk: Conflicting inbound SIP Trunks: "<new>" and "ST_\w+", using the same number\(s\) \["\+14155550100"\] without AllowedNumbers set$/,
    );
    expect(fake.inbound.size).toBe(1);
    expect(fake.rules.size).toBe(1);
  });

  it('replaces an inbound trunk on the same number by releasing it first, and can give it back', async () => {
    const old = await provisioner.createInboundTrunk(inboundSpec());
    await provisioner.releaseInboundNumbers(old.trunkId);
    expect(fake.inboundFor('+14155550100')).toEqual([]);
    const replacement = await provisioner.createInboundTrunk(
      inboundSpec({ credentials: { username: 'new', password: 'pw' } }),
    );
    expect(fake.inboundFor('+14155550100').map((trunk) => trunk.sipTrunkId)).toEqual([replacement.trunkId]);

    // Giving the number back while another trunk carries it is refused, as LiveKit refuses it.
    await expect(provisioner.restoreInboundNumbers(old.trunkId, ['+14155550100'])).rejects.toThrow(/Conflicting/);
    await provisioner.deleteInboundTrunk(replacement);
    await provisioner.restoreInboundNumbers(old.trunkId, ['+14155550100']);
    expect(fake.inboundFor('+14155550100').map((trunk) => trunk.sipTrunkId)).toEqual([old.trunkId]);
  });

  it('creates an outbound trunk with address, numbers, auth, country and owner', async () => {
    const id = await provisioner.createOutboundTrunk({
      name: 'trunk-7-outbound',
      owner,
      address: 'sip.carrier.example.com',
      numbers: ['+14155550100'],
      credentials: { username: 'acme', password: 'secret' },
      destinationCountry: 'US',
    });
    expect(fake.outbound.get(id)).toMatchObject({
      name: 'trunk-7-outbound',
      address: 'sip.carrier.example.com',
      numbers: ['+14155550100'],
      authUsername: 'acme',
      authPassword: 'secret',
      destinationCountry: 'US',
    });
  });

  it.each(['unavailable', 'applied-timeout'] as const)(
    'takes back the trunk when the dispatch rule step fails (%s), leaving nothing at LiveKit',
    async (mode) => {
      fake.failNext('SIP/CreateSIPDispatchRule', mode);
      await expect(provisioner.createInboundTrunk(inboundSpec())).rejects.toThrow(
        /LiveKit could not create the dispatch rule/,
      );
      expect(fake.inbound.size).toBe(0);
      expect(fake.rules.size).toBe(0);
    },
  );

  it('finds and deletes a trunk whose create answer was lost', async () => {
    fake.failNext('SIP/CreateSIPInboundTrunk', 'applied-timeout');
    await expect(provisioner.createInboundTrunk(inboundSpec())).rejects.toThrow(/create the inbound trunk/);
    expect(fake.inbound.size).toBe(0);
    fake.failNext('SIP/CreateSIPOutboundTrunk', 'applied-timeout');
    await expect(
      provisioner.createOutboundTrunk({
        name: 'out',
        owner,
        address: 'sip.carrier.example.com',
        numbers: ['+14155550100'],
        credentials: { username: 'a', password: 'b' },
      }),
    ).rejects.toThrow(/create the outbound trunk/);
    expect(fake.outbound.size).toBe(0);
  });

  it('deletes an inbound trunk twice without error: a rule or trunk already gone counts as deleted', async () => {
    const inbound = await provisioner.createInboundTrunk(inboundSpec());
    await provisioner.deleteInboundTrunk(inbound);
    await provisioner.deleteInboundTrunk(inbound);
    expect(fake.methodsSince(0).filter((method) => method.startsWith('SIP/Delete'))).toEqual([
      'SIP/DeleteSIPDispatchRule',
      'SIP/DeleteSIPTrunk',
      'SIP/DeleteSIPDispatchRule',
      'SIP/DeleteSIPTrunk',
    ]);
    expect(fake.inbound.size + fake.rules.size).toBe(0);
  });

  it('lists what LiveKit holds with the owner tags, others’ objects untagged', async () => {
    const inbound = await provisioner.createInboundTrunk(inboundSpec());
    const foreign = new LiveKitSipProvisioner(fake.settings);
    const theirs = await foreign.createInboundTrunk(
      inboundSpec({ numbers: ['+14155550199'], owner: { ...owner, deployment: 'dep-2' } }),
    );
    const inventory = await provisioner.inventory();
    expect(inventory.inbound).toEqual(
      expect.arrayContaining([
        { trunkId: inbound.trunkId, numbers: ['+14155550100'], owner },
        { trunkId: theirs.trunkId, numbers: ['+14155550199'], owner: { ...owner, deployment: 'dep-2' } },
      ]),
    );
    expect(inventory.dispatchRules.map((rule) => rule.dispatchRuleId).sort()).toEqual(
      [inbound.dispatchRuleId, theirs.dispatchRuleId].sort(),
    );
  });

  it('is refused with the wrong secret, as LiveKit would refuse it', async () => {
    const wrong = new LiveKitSipProvisioner({ ...fake.settings, apiSecret: 'another-secret-entirely-wrong!!' });
    await expect(wrong.deleteOutboundTrunk('ST_x')).rejects.toThrow(/LiveKit could not delete the outbound trunk/);
    expect(fake.calls).toEqual([]);
  });
});
