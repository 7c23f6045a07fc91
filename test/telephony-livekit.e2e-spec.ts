import { JobQueue, Jobs } from '@app/jobs';
import { MetricsRegistry } from '@app/platform';
import {
  CALL_CONTROL,
  type CallControl,
  LiveKitCallControl,
  LiveKitSipProvisioner,
  ownerOf,
  type TrunkOwner,
} from '@app/telephony';
import { SipClient } from 'livekit-server-sdk';
import { ProviderReconcile } from '../apps/worker/src/telephony/provider-reconcile.service';
import { createAccount, sipTrunkRequest, type TestAccount, unheldNumber } from './support/factories';
import { type FailureMode, FakeLiveKit } from './support/livekit-twirp.fake';
import { assignNumber, operatorCommand } from './support/operator-cli';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

/**
 * SIP trunks with SIP_PROVISIONER=livekit against the strict fake of LiveKit's Twirp API: every row of the spec's
 * re-provisioning table, a failure at each of its provider steps, clean-up that converges, and the reconcile.
 */

const UPDATE_FAILED = { error: 'Failed to update SIP trunk. Please try again or contact support.' };
const AGENT = 'support-agent';

const trunkBody = (overrides: Record<string, unknown> = {}) =>
  sipTrunkRequest({ sip_username: 'acme-user', sip_password: 'pw-first-123', ...overrides });

const IP_TRUNK = { inbound_authorization_type: 'ip', allowed_inbound_ips: ['198.51.100.0/24'] };

/** The spec's table: the change, whether the inbound and the outbound trunk are re-created, the trunk it starts from. */
const TABLE: [string, () => Record<string, unknown>, boolean, boolean, Record<string, unknown>?][] = [
  ['sip_username', () => ({ sip_username: 'new-user' }), true, true],
  ['sip_password', () => ({ sip_password: 'another-secret' }), true, true],
  ['sip_address', () => ({ sip_address: '203.0.113.10' }), false, true],
  ['phone_number', () => ({ phone_number: unheldNumber() }), true, true],
  [
    'inbound_authorization_type',
    () => ({ inbound_authorization_type: 'ip', allowed_inbound_ips: ['198.51.100.0/24'] }),
    true,
    false,
  ],
  ['allowed_inbound_ips', () => ({ allowed_inbound_ips: ['192.0.2.0/24'] }), true, false, IP_TRUNK],
  ['outbound_proxy', () => ({ outbound_proxy: true }), false, true],
];

interface Trunk {
  id: number;
  phone_number: string;
  inbound_trunk_id: string;
  outbound_trunk_id: string;
  inbound_authorization_type: string;
}

describe('SIP trunks against LiveKit', () => {
  let fake: FakeLiveKit;
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    fake = await FakeLiveKit.start();
    stack = await startStack({
      env: {
        SIP_PROVISIONER: 'livekit',
        LIVEKIT_URL: fake.url,
        LIVEKIT_API_KEY: fake.apiKey,
        LIVEKIT_API_SECRET: fake.apiSecret,
        LIVEKIT_AGENT_NAME: AGENT,
        // A lost answer costs two seconds here instead of ten (enough for an answer on a loaded machine).
        LIVEKIT_REQUEST_TIMEOUT_SECONDS: '2',
        SIP_OUTBOUND_PROXY_ADDRESS: 'egress.voice.example.net',
      },
    });
    account = await createAccount(stack);
    other = await createAccount(stack);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await fake?.close();
  });
  afterEach(() => fake.clearFailures());

  const createTrunk = (body: object = trunkBody(), owner = account) =>
    stack.http.post('/api/user/phone-numbers/sip-trunks').set(owner.auth).send(body);
  const updateTrunk = (id: number, body: object) =>
    stack.http.put(`/api/user/phone-numbers/sip-trunks/${id}`).set(account.auth).send(body);
  const readTrunk = async (id: number) =>
    (await stack.http.get(`/api/user/phone-numbers/sip-trunks/${id}`).set(account.auth).expect(200)).body.data as Trunk;
  const cleanUpRows = async () =>
    (await stack.dataSource.query('SELECT count(*)::int AS n FROM provider_cleanups'))[0].n as number;
  /** Runs the clean-up job until nothing is recorded (each run deletes what it can). */
  const cleanUp = async () => {
    for (let run = 0; run < 5 && (await cleanUpRows()) > 0; run++) {
      const before = fake.calls.length;
      await stack.api.get(JobQueue).enqueue(Jobs.cleanUpProviderTrunks, {});
      // The worker's job, beside another test lane on two cores: as long as it takes, within reason.
      await waitFor(async () => ((await cleanUpRows()) === 0 || fake.calls.length > before ? true : undefined), 45_000);
      await waitFor(async () => ((await cleanUpRows()) === 0 ? true : undefined), 3_000).catch(() => undefined);
    }
    expect(await cleanUpRows()).toBe(0);
  };
  /** Everything LiveKit holds that was made for this trunk. */
  const heldFor = (id: number) => ({
    inbound: [...fake.inbound.values()].filter((item) => ownerOf(item.metadata)?.trunk === id),
    outbound: [...fake.outbound.values()].filter((item) => ownerOf(item.metadata)?.trunk === id),
    rules: [...fake.rules.values()].filter((item) => ownerOf(item.metadata)?.trunk === id),
  });
  /** LiveKit holds exactly what the row names: one inbound trunk carrying the number, its rule, one outbound trunk. */
  const expectProvisioned = (trunk: Trunk) => {
    const held = heldFor(trunk.id);
    expect(held.inbound.map((item) => item.sipTrunkId)).toEqual([trunk.inbound_trunk_id]);
    expect(held.outbound.map((item) => item.sipTrunkId)).toEqual([trunk.outbound_trunk_id]);
    expect(held.rules.map((item) => item.trunkIds)).toEqual([[trunk.inbound_trunk_id]]);
    expect(fake.inboundFor(trunk.phone_number).map((item) => item.sipTrunkId)).toEqual([trunk.inbound_trunk_id]);
    expect(fake.outbound.get(trunk.outbound_trunk_id)?.numbers).toEqual([trunk.phone_number]);
  };

  it('provisions a trunk whose dispatch rule sends each call to the named agent, with the number and assistant', async () => {
    const trunk = (await createTrunk().expect(201)).body.data as Trunk;
    expectProvisioned(trunk);
    const [rule] = heldFor(trunk.id).rules;
    const told = {
      assistant_id: null,
      phone_number_id: trunk.id,
      phone_number: trunk.phone_number,
      external_id: '{room}',
    };
    expect(rule.roomConfig).toEqual({ agents: [{ agentName: AGENT, metadata: JSON.stringify(told) }] });
    expect(JSON.parse(rule.metadata)).toMatchObject(told);
    expect(fake.inbound.get(trunk.inbound_trunk_id)).toMatchObject({
      authUsername: 'acme-user',
      authPassword: 'pw-first-123',
    });
  });

  it('tells the dispatch rule whenever the assistant answering the number changes', async () => {
    const trunk = (await createTrunk().expect(201)).body.data as Trunk;
    const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200)).body;
    const english = languages.find((language: { iso_2: string }) => language.iso_2 === 'en').id;
    const answering = () => {
      const [rule] = heldFor(trunk.id).rules;
      return JSON.parse(rule.roomConfig!.agents[0].metadata).assistant_id as number | null;
    };
    const assistant = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Front desk', type: 'inbound', language_id: english, phone_number_id: trunk.id })
        .expect(201)
    ).body.data;
    await waitFor(async () => (answering() === assistant.id ? true : undefined), 15_000);
    const rule = heldFor(trunk.id).rules[0].sipDispatchRuleId;
    await stack.http
      .put(`/api/user/assistant/${assistant.id}`)
      .set(account.auth)
      .send({ phone_number_id: null })
      .expect(200);
    await waitFor(async () => (answering() === null ? true : undefined), 15_000);
    // The rule keeps its id, and still routes the trunk's calls.
    expect(heldFor(trunk.id).rules.map((item) => [item.sipDispatchRuleId, item.trunkIds])).toEqual([
      [rule, [trunk.inbound_trunk_id]],
    ]);
  });

  describe.each(TABLE)('changing %s', (_field, change, inbound, outbound, start = {}) => {
    it('re-creates exactly the trunks the spec names, and LiveKit holds exactly what the row names', async () => {
      const before = (await createTrunk(trunkBody(start)).expect(201)).body.data as Trunk;
      const mark = fake.calls.length;
      const after = (await updateTrunk(before.id, change()).expect(200)).body.data as Trunk;
      expect({
        inbound: after.inbound_trunk_id !== before.inbound_trunk_id,
        outbound: after.outbound_trunk_id !== before.outbound_trunk_id,
      }).toEqual({ inbound, outbound });
      expect(await readTrunk(before.id)).toEqual(after);
      await cleanUp();
      expectProvisioned(after);
      // Where the number stays, the old inbound trunk gave it up before the new one was made.
      const methods = fake.methodsSince(mark);
      if (inbound && after.phone_number === before.phone_number) {
        expect(methods.indexOf('SIP/UpdateSIPInboundTrunk')).toBeLessThan(methods.indexOf('SIP/CreateSIPInboundTrunk'));
      } else {
        expect(methods).not.toContain('SIP/UpdateSIPInboundTrunk');
      }
    });

    it('answers 502 and leaves the row and LiveKit as they were when any step fails', async () => {
      // The steps of a successful change, counted on a trunk of its own.
      const probe = (await createTrunk(trunkBody(start)).expect(201)).body.data as Trunk;
      const mark = fake.calls.length;
      await updateTrunk(probe.id, change()).expect(200);
      // Only the steps before the row changes; the deletes of the old trunks come after, from the clean-up job.
      const steps = fake.methodsSince(mark).filter((method) => !method.startsWith('SIP/Delete')).length;
      await cleanUp();
      expect(steps).toBeGreaterThan(0);

      for (let step = 1; step <= steps; step++) {
        for (const mode of ['unavailable', 'applied-timeout'] as FailureMode[]) {
          const before = (await createTrunk(trunkBody(start)).expect(201)).body.data as Trunk;
          fake.failStep(step, mode);
          const response = await updateTrunk(before.id, { ...change(), nickname: 'Changed' });
          expect({ step, mode, status: response.status, body: response.body }).toEqual({
            step,
            mode,
            status: 502,
            body: UPDATE_FAILED,
          });
          fake.clearFailures();
          await cleanUp();
          expect(await readTrunk(before.id)).toEqual(before);
          expectProvisioned(before);
        }
      }
    }, 120_000);
  });

  it('keeps the window in which the number has no inbound trunk to one provider round trip', async () => {
    const before = (await createTrunk().expect(201)).body.data as Trunk;
    const mark = fake.calls.length;
    await updateTrunk(before.id, { sip_password: 'rotated-secret' }).expect(200);
    const calls = fake.calls.slice(mark);
    const at = (method: string) => calls.find((call) => call.method === method)!.at;
    const noTrunk = at('SIP/CreateSIPInboundTrunk') - at('SIP/UpdateSIPInboundTrunk');
    const noRoute = at('SIP/CreateSIPDispatchRule') - at('SIP/UpdateSIPInboundTrunk');
    // Between the release and the create there is nothing but the release's answer coming back.
    const between = calls.map((call) => call.method);
    expect(between.indexOf('SIP/CreateSIPInboundTrunk') - between.indexOf('SIP/UpdateSIPInboundTrunk')).toBe(1);
    expect(noTrunk).toBeLessThan(1000);
    expect(noRoute).toBeLessThan(2000);
  });

  it('gives a number two accounts race for to one of them, with one trunk at LiveKit', async () => {
    const number = unheldNumber();
    const [first, second] = await Promise.all([
      createTrunk(trunkBody({ phone_number: number })),
      createTrunk(trunkBody({ phone_number: number }), other),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 422]);
    const loser = first.status === 422 ? first : second;
    expect(loser.body).toEqual({
      message: 'The phone number has already been taken.',
      errors: { phone_number: ['The phone number has already been taken.'] },
    });
    expect(fake.inboundFor(number)).toHaveLength(1);
  });

  it.each([1, 2, 3])(
    'completes the clean-up after it failed at step %i, by retrying',
    async (step) => {
      const before = (await createTrunk().expect(201)).body.data as Trunk;
      // Deleting the trunk: its dispatch rule, its inbound trunk, its outbound trunk.
      fake.failStep(step, 'applied-timeout');
      await stack.http.delete(`/api/user/phone-numbers/${before.id}`).set(account.auth).expect(200);
      await cleanUp();
      expect(heldFor(before.id)).toEqual({ inbound: [], outbound: [], rules: [] });
      expect(fake.inboundFor(before.phone_number)).toEqual([]);
    },
    60_000,
  );

  describe('the reconcile', () => {
    const reconcile = () => stack.worker!.get(ProviderReconcile).reconcile();

    it('removes an orphan this deployment made, and never touches what others made', async () => {
      const [{ deployment_id: deployment }] = await stack.dataSource.query(
        'SELECT deployment_id FROM deployment_identity',
      );
      const direct = new LiveKitSipProvisioner(fake.settings);
      const spec = (owner: TrunkOwner, number: string) => ({
        name: 'orphan',
        owner,
        dispatch: { agentName: AGENT, metadata: { assistant_id: null, phone_number_id: 0, phone_number: number } },
        numbers: [number],
        credentials: { username: 'u', password: 'p' },
      });
      const old = Date.now() - 3_600_000;
      const ours = await direct.createInboundTrunk(
        spec({ deployment, trunk: 999_999, createdAt: old }, unheldNumber()),
      );
      const young = await direct.createInboundTrunk(
        spec({ deployment, trunk: 999_998, createdAt: Date.now() }, unheldNumber()),
      );
      const theirs = await direct.createInboundTrunk(
        spec({ deployment: 'another-deployment', trunk: 999_999, createdAt: old }, unheldNumber()),
      );
      const live = (await createTrunk().expect(201)).body.data as Trunk;

      const outcome = await reconcile();
      expect(outcome).toEqual({ removed: 2, remaining: 0, restored: 0 });
      expect(fake.inbound.has(ours.trunkId) || fake.rules.has(ours.dispatchRuleId)).toBe(false);
      expect(fake.inbound.has(young.trunkId) && fake.inbound.has(theirs.trunkId)).toBe(true);
      expect(fake.rules.has(theirs.dispatchRuleId)).toBe(true);
      expectProvisioned(live);
      const metric = await stack
        .worker!.get(MetricsRegistry)
        .getSingleMetricAsString('sip_provider_orphans_removed_total');
      expect(metric).toMatch(/sip_provider_orphans_removed_total\{kind="inbound"\} [1-9]/);
      expect(metric).toMatch(/sip_provider_orphans_removed_total\{kind="dispatch_rule"\} [1-9]/);
    });

    it('gives a stored trunk back the number a failed rollback could not restore', async () => {
      const before = (await createTrunk().expect(201)).body.data as Trunk;
      // Steps: the outbound trunk, the release, the inbound trunk (fails), the look for it, the give-back (fails).
      fake.failStep(3, 'unavailable');
      fake.failStep(5, 'unavailable');
      await updateTrunk(before.id, { sip_username: 'another-user' }).expect(502, UPDATE_FAILED);
      await cleanUp();
      expect(fake.inboundFor(before.phone_number)).toEqual([]);
      expect(await reconcile()).toMatchObject({ restored: 1 });
      expectProvisioned(before);
    });
  });
});

describe('Calls from a number bought from a carrier, with CALL_DIALER=livekit', () => {
  let fake: FakeLiveKit;
  let stack: Stack;
  let account: TestAccount;
  const livekit = () => ({ LIVEKIT_URL: fake.url, LIVEKIT_API_KEY: fake.apiKey, LIVEKIT_API_SECRET: fake.apiSecret });

  beforeAll(async () => {
    fake = await FakeLiveKit.start();
    stack = await startStack({
      env: { CALL_DIALER: 'livekit', ...livekit(), LIVEKIT_AGENT_NAME: AGENT, LIVEKIT_REQUEST_TIMEOUT_SECONDS: '2' },
    });
    account = await createAccount(stack);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await fake?.close();
  });

  it('refuses make_call without an outbound trunk before LiveKit is asked, and dials through the one the operator names', async () => {
    // The deployment's outbound trunk to its carrier, made in LiveKit by the operator.
    const carrier = await new SipClient(fake.url, fake.apiKey, fake.apiSecret).createSipOutboundTrunk(
      'carrier',
      'sip.carrier.example.com',
      ['+14155550000'],
    );
    const number = unheldNumber();
    // An id LiveKit does not hold is refused, and nothing is assigned.
    expect(
      await assignNumber(stack, account.email, number, ['--outbound-trunk', 'ST_notInLiveKit1'], livekit()),
    ).toEqual({
      code: 2,
      output: 'LiveKit has no outbound trunk ST_notInLiveKit1\n',
    });
    expect((await assignNumber(stack, account.email, number, [], livekit())).code).toBe(0);
    const all = (await stack.http.get('/api/user/phone-numbers/all').set(account.auth).expect(200)).body.data;
    const held = all.find((each: { phone_number: string }) => each.phone_number === number);
    const [language] = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
    const agent = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Caller', type: 'outbound', language_id: language.id, phone_number_id: held.id })
        .expect(201)
    ).body.data;
    const makeCall = () =>
      stack.http
        .post('/api/user/make_call')
        .set(account.auth)
        .send({ phone_number: '+14155550181', assistant_id: agent.id });

    const mark = fake.calls.length;
    const message = "The assistant's phone number cannot place calls: it has no outbound SIP trunk.";
    expect((await makeCall().expect(422)).body).toEqual({ message, errors: { assistant_id: [message] } });
    expect(fake.methodsSince(mark)).toEqual([]);

    expect(
      await operatorCommand(
        stack,
        [
          'phone-numbers:outbound-trunk',
          '--user',
          account.email,
          '--number',
          number,
          '--outbound-trunk',
          carrier.sipTrunkId,
        ],
        livekit(),
      ),
    ).toMatchObject({ code: 0 });
    const callId = (await makeCall().expect(201)).body.call_id;
    const { external_id: room } = (await stack.http.get(`/api/user/calls/${callId}`).set(account.auth).expect(200)).body
      .data;
    const participant = await waitFor(async () => fake.participants.find((each) => each.roomName === room));
    expect(participant).toMatchObject({ sipTrunkId: carrier.sipTrunkId, sipNumber: number, sipCallTo: '+14155550181' });
  }, 90_000);

  it('controls calls at LiveKit too: the worker’s call control ends a call by deleting its room', async () => {
    const control = stack.worker!.get<symbol, CallControl>(CALL_CONTROL, { strict: false });
    expect(control).toBeInstanceOf(LiveKitCallControl);
    fake.join('call-e2e-end', { identity: 'sip_+14155550123', kind: 'SIP' });
    await control.endCall({ room: 'call-e2e-end' });
    expect(fake.rooms.has('call-e2e-end')).toBe(false);
    expect(fake.participantsOf('call-e2e-end')).toEqual([]);
    expect(fake.calls.at(-1)).toMatchObject({ method: 'RoomService/DeleteRoom', body: { room: 'call-e2e-end' } });
  });
});
