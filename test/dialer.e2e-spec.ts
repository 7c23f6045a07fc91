import { Clock } from '@app/calls';
import { JobQueue, Jobs } from '@app/jobs';
import { CALL_DIALER, type LocalCallDialer } from '@app/telephony';
import { createWorkerApp } from '../apps/worker/src/worker.app';
import { DialScheduler } from '../apps/worker/src/dialer/dial-scheduler.service';
import { AppProcess } from './support/app-process';
import { createAccount, sipTrunkRequest, type TestAccount, unheldNumber } from './support/factories';
import { assignNumber, operatorCommand } from './support/operator-cli';
import { type Stack, startStack } from './support/stack';
import { UNTIL_STALLED, waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-dialer-tests-0123456789';
const runtime = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const MINUTE = 60_000;

interface DialRow {
  attempt_id: string;
  request: { callId: number; to: string; from: string; metadata: { lead_id: number | null; variables: object } };
}

/** Fixtures shared by the dialer suites: an account with caller numbers and an outbound assistant. */
function dialerFixtures(stackOf: () => Stack) {
  const api = (owner: TestAccount) => ({
    post: (path: string, body: object) => stackOf().http.post(`/api/user/${path}`).set(owner.auth).send(body),
    put: (path: string, body: object) => stackOf().http.put(`/api/user/${path}`).set(owner.auth).send(body),
    get: (path: string) => stackOf().http.get(`/api/user/${path}`).set(owner.auth),
  });
  const number = async (owner: TestAccount) =>
    (await api(owner).post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data as {
      id: number;
      phone_number: string;
    };
  const assistant = async (owner: TestAccount, body: object = {}) => {
    const languages = (await api(owner).get('assistants/languages')).body;
    return (
      await api(owner)
        .post('assistant', { name: 'Dialer', type: 'outbound', language_id: languages[0].id, ...body })
        .expect(201)
    ).body.data as { id: number };
  };
  const campaign = async (owner: TestAccount, body: object) =>
    (
      await api(owner)
        .post('campaign', { name: 'Renewals', ...body })
        .expect(201)
    ).body.data as { id: number };
  const lead = async (owner: TestAccount, campaignId: number, phone: string, extra: object = {}) =>
    (
      await api(owner)
        .post('lead', { phone_number: phone, campaign_id: campaignId, ...extra })
        .expect(201)
    ).body.data as { id: number };
  const start = (owner: TestAccount, campaignId: number) =>
    api(owner).post('campaigns/update-status', { campaign_id: campaignId, action: 'start' }).expect(200);
  const stop = (owner: TestAccount, campaignId: number) =>
    api(owner).post('campaigns/update-status', { campaign_id: campaignId, action: 'stop' }).expect(200);
  /** Every dial request the local dialer got for a campaign's calls, in the order the calls were claimed. */
  const dials = async (campaignId: number): Promise<DialRow[]> =>
    stackOf().dataSource.query(
      `SELECT d.attempt_id, d.request FROM local_dial_requests d JOIN calls c ON c.external_id = d.attempt_id
        WHERE c.campaign_id = $1 ORDER BY c.id, d.id`,
      [campaignId],
    );
  const dialsReach = (campaignId: number, count: number, timeoutMs = 20_000) =>
    waitFor(async () => {
      const rows = await dials(campaignId);
      return rows.length >= count ? rows : undefined;
    }, timeoutMs);
  /** Reports a call's progress as the voice runtime would. */
  const report = async (externalId: string, status: string, extra: object = {}) => {
    const [call] = await stackOf().dataSource.query(
      `SELECT assistant_id, client_phone_number, assistant_phone_number FROM calls WHERE external_id = $1`,
      [externalId],
    );
    await stackOf()
      .http.put(`/api/internal/calls/${externalId}`)
      .set(runtime)
      .send({ ...call, type: 'outbound', status, ...extra })
      .expect(200);
  };
  const leadRead = async (owner: TestAccount, id: number) =>
    (await api(owner).get(`leads/${id}`).expect(200)).body.data;
  const campaignStatus = async (owner: TestAccount, id: number) =>
    (await api(owner).get(`campaign/${id}`).expect(200)).body.data.status as string;
  return { api, number, assistant, campaign, lead, start, stop, dials, dialsReach, report, leadRead, campaignStatus };
}

describe('Campaign dialer', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let clock: Clock;
  let scheduler: DialScheduler;
  const f = dialerFixtures(() => stack);

  beforeAll(async () => {
    // The periodic look is slowed down so that each test decides when the scheduler runs (besides the
    // triggers a user causes: a start, a call's end).
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, DIALER_INTERVAL_SECONDS: '3600' } });
    clock = stack.worker!.get(Clock, { strict: false });
    scheduler = stack.worker!.get(DialScheduler, { strict: false });
    account = await createAccount(stack);
    other = await createAccount(stack);
  }, 60_000);
  afterAll(() => stack.close());
  afterEach(() => clock.set(new Date()));

  it('dials the oldest due leads up to the parallel limit, rotating caller numbers, and completes', async () => {
    const [first, second] = [await f.number(account), await f.number(account)];
    const agent = await f.assistant(account);
    const target = await f.campaign(account, {
      assistant_id: agent.id,
      phone_number_ids: [first.id, second.id],
      max_calls_in_parallel: 2,
    });
    const leads = [];
    for (const phone of ['+14155550101', '+14155550102', '+14155550103', '+14155550104']) {
      leads.push(await f.lead(account, target.id, phone, { variables: { name: phone.slice(-3) } }));
    }
    const blocked = await f.lead(account, target.id, '+14155550105');
    await stack.http
      .patch(`/api/user/leads/${blocked.id}`)
      .set(account.auth)
      .send({ status: 'blacklisted' })
      .expect(200);
    await f.start(account, target.id);

    const firstDials = await f.dialsReach(target.id, 2);
    expect(firstDials.map((dial) => dial.request.metadata.lead_id)).toEqual([leads[0].id, leads[1].id]);
    expect(firstDials.map((dial) => dial.request.from)).toEqual([first.phone_number, second.phone_number]);
    expect(firstDials[0].request).toMatchObject({
      to: '+14155550101',
      metadata: { lead_id: leads[0].id, variables: { name: '101' } },
    });
    expect((await f.leadRead(account, leads[0].id)).status).toBe('scheduled');
    // The limit holds however often the scheduler runs.
    await scheduler.run(target.id);
    expect(await f.dials(target.id)).toHaveLength(2);

    // The call list shows each dialled call from `initiated` on, with its campaign, lead and runtime id.
    const listed = (await f.api(account).get(`calls?campaign_id=${target.id}`).expect(200)).body.data;
    expect(listed).toHaveLength(2);
    expect(listed[1]).toMatchObject({
      external_id: firstDials[0].attempt_id,
      status: 'initiated',
      type: 'outbound',
      campaign_name: 'Renewals',
      lead_id: leads[0].id,
      client_phone_number: '+14155550101',
      assistant_phone_number: first.phone_number,
    });

    await f.report(firstDials[0].attempt_id, 'in-progress');
    expect((await f.leadRead(account, leads[0].id)).status).toBe('processing');
    await f.report(firstDials[0].attempt_id, 'completed', { duration: 30 });
    // A call's end frees a slot and the next lead is dialled at once, from the next number in turn.
    const third = (await f.dialsReach(target.id, 3))[2];
    expect(third.request).toMatchObject({ to: '+14155550103', from: first.phone_number });
    expect((await f.leadRead(account, leads[0].id)).status).toBe('completed');

    await f.report(firstDials[1].attempt_id, 'completed');
    const all = await f.dialsReach(target.id, 4);
    for (const dial of all.slice(2)) await f.report(dial.attempt_id, 'completed');
    await waitFor(async () => ((await f.campaignStatus(account, target.id)) === 'completed' ? true : undefined));
    expect(all.map((dial) => dial.request.to)).not.toContain('+14155550105');
    expect((await f.leadRead(account, blocked.id)).status).toBe('blacklisted');
    // The other account sees none of it.
    expect((await f.api(other).get(`calls?campaign_id=${target.id}`)).status).toBe(200);
    expect((await f.api(other).get(`calls?campaign_id=${target.id}`)).body.data).toEqual([]);
  }, 60_000);

  it('calls only within its hours and days on its own wall clock, across a daylight-saving change', async () => {
    const agent = await f.assistant(account);
    const caller = await f.number(account);
    const target = await f.campaign(account, {
      assistant_id: agent.id,
      phone_number_ids: [caller.id],
      timezone: 'America/New_York',
      allowed_hours_start_time: '09:00',
      allowed_hours_end_time: '10:00',
      allowed_days: ['saturday', 'sunday'],
    });
    await f.lead(account, target.id, '+14155550111');
    // 13:30 UTC on Saturday 7 March 2026 is 08:30 in New York (EST): too early.
    clock.set('2026-03-07T13:30:00Z');
    await f.start(account, target.id);
    expect(await scheduler.run(target.id)).toEqual({ idle: 'outside-hours' });
    // 13:30 UTC on Friday 6 March is 08:30 as well, and Friday is not allowed anyway.
    clock.set('2026-03-06T14:30:00Z');
    expect(await scheduler.run(target.id)).toEqual({ idle: 'outside-hours' });
    expect(await f.dials(target.id)).toEqual([]);
    // The same 13:30 UTC on Sunday 8 March is 09:30 EDT, after the clocks went forward: inside the window.
    clock.set('2026-03-08T13:30:00Z');
    expect(await scheduler.run(target.id)).toEqual({ claimed: [expect.any(Number)] });
    expect(await f.dialsReach(target.id, 1)).toHaveLength(1);
  }, 30_000);

  it('starts no call once stopped, lets calls in flight finish, and continues where it was when restarted', async () => {
    const agent = await f.assistant(account);
    const caller = await f.number(account);
    const target = await f.campaign(account, {
      assistant_id: agent.id,
      phone_number_ids: [caller.id],
      max_calls_in_parallel: 1,
    });
    const [one, two] = [
      await f.lead(account, target.id, '+14155550121'),
      await f.lead(account, target.id, '+14155550122'),
    ];
    await f.start(account, target.id);
    const [firstDial] = await f.dialsReach(target.id, 1);
    expect(firstDial.request.metadata.lead_id).toBe(one.id);
    await f.stop(account, target.id);
    await f.report(firstDial.attempt_id, 'completed');
    expect(await scheduler.run(target.id)).toEqual({ idle: 'not-running' });
    expect(await f.dials(target.id)).toHaveLength(1);
    expect((await f.leadRead(account, one.id)).status).toBe('completed');
    expect((await f.leadRead(account, two.id)).status).toBe('created');

    await f.start(account, target.id);
    const dials = await f.dialsReach(target.id, 2);
    expect(dials[1].request.metadata.lead_id).toBe(two.id);
  }, 30_000);

  it('retries on one budget, then tries the secondary contacts in turn, to reached-max-retries', async () => {
    const agent = await f.assistant(account);
    const caller = await f.number(account);
    const target = await f.campaign(account, {
      assistant_id: agent.id,
      phone_number_ids: [caller.id],
      max_retries: 2,
      retry_interval: 10,
    });
    const person = await f.lead(account, target.id, '+14155550131', {
      variables: { name: 'Ada' },
      secondary_contacts: [{ phone_number: '+14155550132', variables: { relation: 'office' } }],
    });
    await f.start(account, target.id);
    const later = (minutes: number) => clock.set(new Date(Date.now() + minutes * MINUTE));
    const expectDial = async (count: number, to: string) => {
      const dial = (await f.dialsReach(target.id, count))[count - 1];
      expect(dial.request.to).toBe(to);
      // The scheduler's clock back to the database's: a retry is set for the retry interval after the database's
      // now(), and a clock left minutes ahead would find it due at once when the call's end asks the scheduler to look.
      clock.set(new Date());
      return dial;
    };

    await f.report((await expectDial(1, '+14155550131')).attempt_id, 'busy');
    let read = await f.leadRead(account, person.id);
    expect(read.status).toBe('rescheduled');
    // Not due before its retry interval.
    expect(await scheduler.run(target.id)).toEqual({ idle: 'nothing-due' });
    later(11);
    await scheduler.run(target.id);
    // A machine answering spends the second and last try of the lead's own number.
    await f.report((await expectDial(2, '+14155550131')).attempt_id, 'completed', { answered_by: 'machine' });
    read = await f.leadRead(account, person.id);
    expect(read.status).toBe('rescheduled');

    later(22);
    await scheduler.run(target.id);
    const toContact = await expectDial(3, '+14155550132');
    expect(toContact.request.metadata.variables).toEqual({ name: 'Ada', relation: 'office' });
    expect((await f.leadRead(account, person.id)).secondary_contacts[0].status).toBe('scheduled');
    await f.report(toContact.attempt_id, 'no-answer');
    read = await f.leadRead(account, person.id);
    expect(read.secondary_contacts[0].status).toBe('rescheduled');
    expect(read.status).toBe('rescheduled');

    later(33);
    await scheduler.run(target.id);
    await f.report((await expectDial(4, '+14155550132')).attempt_id, 'failed');
    read = await f.leadRead(account, person.id);
    expect(read.status).toBe('reached-max-retries');
    expect(read.secondary_contacts[0].status).toBe('reached-max-retries');
    // Its last lead final, the campaign completes (the call's end asked the scheduler to look).
    await waitFor(async () => ((await f.campaignStatus(account, target.id)) === 'completed' ? true : undefined));
    later(60);
    expect(await scheduler.run(target.id)).toEqual({ idle: 'not-running' });
    expect(await f.dials(target.id)).toHaveLength(4);
  }, 45_000);

  it('ends a call the provider refuses as failed, with the reason, spending one try', async () => {
    const dialer = stack.worker!.get(CALL_DIALER, { strict: false }) as LocalCallDialer;
    const agent = await f.assistant(account);
    const caller = await f.number(account);
    const target = await f.campaign(account, { assistant_id: agent.id, phone_number_ids: [caller.id], max_retries: 3 });
    const person = await f.lead(account, target.id, '+14155550141');
    dialer.failNext('The trunk rejected the call: 403 Forbidden');
    await f.start(account, target.id);
    const call = await waitFor(async () => {
      const [row] = (await f.api(account).get(`calls?campaign_id=${target.id}`)).body.data;
      return row?.status === 'failed' ? row : undefined;
    });
    expect(call.evaluation).toEqual({ reason: 'The trunk rejected the call: 403 Forbidden' });
    expect(await f.dials(target.id)).toEqual([]);
    const read = await f.leadRead(account, person.id);
    expect(read.status).toBe('rescheduled');
    const [{ attempts }] = await stack.dataSource.query('SELECT attempts FROM leads WHERE id = $1', [person.id]);
    expect(attempts).toBe(1);
  }, 30_000);

  it('settles dials whose calls moved on, and reaches a stuck dial behind a thousand of them', async () => {
    const caller = await f.number(account);
    const agent = await f.assistant(account);
    const target = await f.campaign(account, { assistant_id: agent.id, phone_number_ids: [caller.id] });
    await f.lead(account, target.id, '+14155550191');
    await f.start(account, target.id);
    const [placed] = await f.dialsReach(target.id, 1);
    await f.stop(account, target.id);
    const columns = (
      await stack.dataSource.query(
        `SELECT string_agg(quote_ident(column_name), ', ') AS list FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = 'calls'
            AND column_name NOT IN ('id', 'external_id', 'status', 'dial_state', 'dial_started_at', 'lead_id',
                                    'webhook_event_id', 'ended_at')`,
      )
    )[0].list as string;
    const copies = (prefix: string, count: number, status: string, startedAgo: string) =>
      stack.dataSource.query(
        `INSERT INTO calls (external_id, status, dial_state, dial_started_at, ${columns})
         SELECT '${prefix}-' || n, '${status}', 'dialing', now() - interval '${startedAgo}', ${columns}
           FROM calls, generate_series(1, ${count}) AS n WHERE external_id = $1`,
        [placed.attempt_id],
      );
    // What workers killed mid-dial leave: 1,100 dials never marked done whose calls the runtime has completed since,
    // and, behind them, one whose call is still waiting to be placed.
    await copies('moved-on', 1100, 'completed', '2 hours');
    await copies('stuck', 1, 'initiated', '1 hour');
    const { settledDials, resumedDials } = await scheduler.sweep();
    expect(settledDials).toBe(1000);
    expect(resumedDials).toBe(1);
    await waitFor(async () => {
      const [row] = await stack.dataSource.query(
        `SELECT count(*)::int AS n FROM local_dial_requests WHERE attempt_id = 'stuck-1'`,
      );
      return row.n === 1 ? true : undefined;
    }, 20_000);
    const second = await scheduler.sweep();
    expect(second).toMatchObject({ settledDials: 100, resumedDials: 0 });
    const states = await waitFor(async () => {
      const rows = await stack.dataSource.query(
        `SELECT dial_state, count(*)::int AS n FROM calls
          WHERE external_id LIKE 'moved-on-%' OR external_id = 'stuck-1' GROUP BY dial_state`,
      );
      return rows.length === 1 ? rows : undefined;
    }, 10_000);
    expect(states).toEqual([{ dial_state: 'dialed', n: 1101 }]);
  }, 60_000);

  it('never has more calls in flight than the limit with two workers claiming at once', async () => {
    const second = await createWorkerApp(stack.config);
    try {
      const agent = await f.assistant(account);
      const caller = await f.number(account);
      const target = await f.campaign(account, {
        assistant_id: agent.id,
        phone_number_ids: [caller.id],
        max_calls_in_parallel: 3,
      });
      for (let index = 0; index < 12; index++) {
        await f.lead(account, target.id, `+1415555${String(200 + index).padStart(4, '0')}`);
      }
      await f.start(account, target.id);
      const schedulers = [scheduler, second.get(DialScheduler, { strict: false })];
      const inFlight = async () =>
        (
          await stack.dataSource.query(
            `SELECT count(*)::int AS n FROM calls WHERE campaign_id = $1 AND status IN ('initiated', 'ringing', 'in-progress')`,
            [target.id],
          )
        )[0].n as number;
      let most = 0;
      for (let round = 0; round < 4; round++) {
        await Promise.all(Array.from({ length: 8 }, (_, index) => schedulers[index % 2].run(target.id)));
        most = Math.max(most, await inFlight());
        const open = await f.dialsReach(target.id, 3 * (round + 1));
        for (const dial of open.slice(3 * round, 3 * round + 3)) await f.report(dial.attempt_id, 'completed');
      }
      expect(most).toBe(3);
      const dialled: DialRow[] = await f.dials(target.id);
      expect(dialled).toHaveLength(12);
      expect(new Set(dialled.map((dial) => dial.request.metadata.lead_id)).size).toBe(12);
    } finally {
      await second.close();
    }
  }, 60_000);

  describe('POST /user/make_call', () => {
    it('places one call from the assistant’s number and shows it in the call list', async () => {
      const caller = await f.number(account);
      const agent = await f.assistant(account, { phone_number_id: caller.id });
      const response = await f
        .api(account)
        .post('make_call', { phone_number: '+14155550151', assistant_id: agent.id, variables: { plan: 'gold' } })
        .expect(201);
      expect(response.body).toEqual({
        message: 'Call initiated successfully.',
        call_id: expect.any(Number),
        status: 'initiated',
      });
      const call = (await f.api(account).get(`calls/${response.body.call_id}`).expect(200)).body.data;
      expect(call).toMatchObject({
        status: 'initiated',
        type: 'outbound',
        client_phone_number: '+14155550151',
        assistant_phone_number: caller.phone_number,
        lead_id: null,
        variables: { plan: 'gold' },
      });
      expect(call.campaign_name).toBeUndefined();
      const [dial] = await waitFor(async () => {
        const rows = await stack.dataSource.query('SELECT request FROM local_dial_requests WHERE attempt_id = $1', [
          call.external_id,
        ]);
        return rows.length > 0 ? rows : undefined;
      });
      expect(dial.request).toMatchObject({ to: '+14155550151', from: caller.phone_number, assistantId: agent.id });
      await f.api(other).get(`calls/${response.body.call_id}`).expect(404, { message: 'Call not found.' });
    });

    it('refuses a number not in E.164 and an assistant that cannot call', async () => {
      const caller = await f.number(account);
      const ready = await f.assistant(account, { phone_number_id: caller.id });
      const numberless = await f.assistant(account);
      const inbound = await f.assistant(account, { type: 'inbound' });
      const theirs = await f.assistant(other, { phone_number_id: (await f.number(other)).id });
      const errors = async (body: object) =>
        (await f.api(account).post('make_call', body).expect(422)).body.errors as Record<string, string[]>;
      expect(await errors({ phone_number: '4155550151', assistant_id: ready.id })).toEqual({
        phone_number: ['The phone number field must be a valid phone number.'],
      });
      expect(await errors({ phone_number: '+1 415 555 0151', assistant_id: ready.id })).toEqual({
        phone_number: ['The phone number field must be a valid phone number.'],
      });
      expect(await errors({ phone_number: '+14155550151', assistant_id: numberless.id })).toEqual({
        assistant_id: ['The assistant has no phone number to call from.'],
      });
      expect(await errors({ phone_number: '+14155550151', assistant_id: inbound.id })).toEqual({
        assistant_id: ['The assistant id field must be an outbound assistant.'],
      });
      expect(await errors({ phone_number: '+14155550151', assistant_id: theirs.id })).toEqual({
        assistant_id: ['The selected assistant id is invalid.'],
      });
      expect(await errors({})).toEqual({
        phone_number: ['The phone number field is required.'],
        assistant_id: ['The assistant id field is required.'],
      });
    });
  });

  describe('numbers bought from a carrier (phone-numbers:assign)', () => {
    /** A number the operator command gave the account, with the options given (an outbound trunk, say). */
    const assigned = async (...options: string[]) => {
      const number = unheldNumber();
      expect(await assignNumber(stack, account.email, number, options)).toMatchObject({ code: 0 });
      const all = (await f.api(account).get('phone-numbers/all').expect(200)).body.data as {
        id: number;
        phone_number: string;
      }[];
      return all.find((each) => each.phone_number === number)!;
    };
    const callsOf = async (assistantId: number) =>
      (await f.api(account).get(`calls?assistant_id=${assistantId}`).expect(200)).body.total as number;

    it('refuses make_call and a campaign’s start from one without an outbound trunk, placing nothing', async () => {
      const number = await assigned();
      const agent = await f.assistant(account, { phone_number_id: number.id });
      const message = "The assistant's phone number cannot place calls: it has no outbound SIP trunk.";
      expect(
        (await f.api(account).post('make_call', { phone_number: '+14155550171', assistant_id: agent.id }).expect(422))
          .body,
      ).toEqual({ message, errors: { assistant_id: [message] } });
      const target = await f.campaign(account, { assistant_id: agent.id });
      await f.lead(account, target.id, '+14155550172');
      const refused = "The campaign's phone numbers cannot place calls: none has an outbound SIP trunk.";
      expect(
        (await f.api(account).post('campaigns/update-status', { campaign_id: target.id, action: 'start' }).expect(422))
          .body,
      ).toEqual({ message: refused, errors: { campaign_id: [refused] } });
      expect(await callsOf(agent.id)).toBe(0);
      expect(await f.campaignStatus(account, target.id)).toBe('draft');
    }, 60_000);

    it('calls through the outbound trunk an operator names, at assignment or later', async () => {
      const later = await assigned();
      const agent = await f.assistant(account, { phone_number_id: later.id });
      expect(
        await operatorCommand(stack, [
          'phone-numbers:outbound-trunk',
          '--user',
          account.email,
          '--number',
          later.phone_number,
          '--outbound-trunk',
          'ST_operatorTrunk7',
        ]),
      ).toMatchObject({ code: 0 });
      const placed = (
        await f.api(account).post('make_call', { phone_number: '+14155550173', assistant_id: agent.id }).expect(201)
      ).body;
      const { external_id: externalId } = (await f.api(account).get(`calls/${placed.call_id}`).expect(200)).body.data;
      const [dial] = await waitFor(async () => {
        const rows = await stack.dataSource.query('SELECT request FROM local_dial_requests WHERE attempt_id = $1', [
          externalId,
        ]);
        return rows.length > 0 ? rows : undefined;
      });
      expect(dial.request).toMatchObject({ from: later.phone_number, outboundTrunkId: 'ST_operatorTrunk7' });

      // Given at assignment, a campaign calls from it.
      const atOnce = await assigned('--outbound-trunk', 'ST_operatorTrunk8');
      const target = await f.campaign(account, { assistant_id: agent.id, phone_number_ids: [atOnce.id] });
      await f.lead(account, target.id, '+14155550174');
      await f.start(account, target.id);
      const [campaignDial] = await f.dialsReach(target.id, 1);
      expect(campaignDial.request).toMatchObject({ from: atOnce.phone_number, outboundTrunkId: 'ST_operatorTrunk8' });
    }, 60_000);

    it('fails a campaign’s call from one without an outbound trunk, with the reason on the call, and dials from the others', async () => {
      const trunk = await f.number(account);
      const bare = await assigned();
      const agent = await f.assistant(account);
      const target = await f.campaign(account, {
        assistant_id: agent.id,
        phone_number_ids: [trunk.id, bare.id],
        max_calls_in_parallel: 2,
      });
      const first = await f.lead(account, target.id, '+14155550175');
      const second = await f.lead(account, target.id, '+14155550176');
      await f.start(account, target.id);
      const failed = await waitFor(async () => {
        const rows = (await f.api(account).get(`calls?campaign_id=${target.id}`)).body.data;
        return rows.find((row: { status: string }) => row.status === 'failed');
      });
      expect(failed).toMatchObject({
        lead_id: second.id,
        assistant_phone_number: bare.phone_number,
        evaluation: {
          reason: `The caller number ${bare.phone_number} cannot place calls: it has no outbound SIP trunk.`,
        },
      });
      const dials = await f.dialsReach(target.id, 1);
      expect(dials.map((dial) => [dial.request.metadata.lead_id, dial.request.from])).toEqual([
        [first.id, trunk.phone_number],
      ]);
      expect((await f.leadRead(account, second.id)).status).toBe('rescheduled');
    }, 60_000);

    // Six runs of the operator's command, each a Node process of its own: 17 s alone, over a minute on a loaded machine.
    it('refuses an outbound trunk id that is not LiveKit’s, and a number the account holds as a SIP trunk or not at all', async () => {
      const command = (number: string, ...options: string[]) =>
        operatorCommand(stack, [
          'phone-numbers:outbound-trunk',
          '--user',
          account.email,
          '--number',
          number,
          ...options,
        ]);
      const number = unheldNumber();
      expect(await assignNumber(stack, account.email, number, ['--outbound-trunk', 'trunk-1'])).toEqual({
        code: 2,
        output: '--outbound-trunk must be a LiveKit outbound trunk id, e.g. ST_abc123\n',
      });
      const trunk = await f.number(account);
      expect(await command(trunk.phone_number, '--outbound-trunk', 'ST_x1')).toEqual({
        code: 2,
        output: `${account.email} holds no assigned number ${trunk.phone_number} (a SIP trunk's number has its own outbound trunk)\n`,
      });
      expect((await command(number, '--outbound-trunk', 'ST_x1')).code).toBe(2);
      expect((await command(number)).output).toBe(
        'either --outbound-trunk <LiveKit outbound trunk id> or --none is required\n',
      );
    }, 180_000);
  });
});

describe('Campaign dialer with a worker killed mid-dial', () => {
  let stack: Stack;
  let account: TestAccount;
  const workers: AppProcess[] = [];
  const f = dialerFixtures(() => stack);

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    account = await createAccount(stack);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await stack.close();
  });

  it(
    'loses no lead and dials nobody twice',
    async () => {
      const fast = {
        JOB_LOCK_MS: '2000',
        JOB_STALLED_CHECK_MS: '1000',
        DIAL_LEASE_SECONDS: '5',
        DIALER_INTERVAL_SECONDS: '1',
      };
      // The first worker's provider hangs, so it dies while its dials are under way.
      workers.push(await AppProcess.start({ ...fast, LOCAL_DIALER_LATENCY_MS: '600000' }, 'worker'));
      const caller = await f.number(account);
      const agent = await f.assistant(account);
      const target = await f.campaign(account, { assistant_id: agent.id, phone_number_ids: [caller.id] });
      const leads = [];
      for (const phone of ['+14155550161', '+14155550162', '+14155550163'])
        leads.push(await f.lead(account, target.id, phone));
      await f.start(account, target.id);
      const dialing = async () =>
        (
          await stack.dataSource.query(
            `SELECT count(*)::int AS n FROM calls WHERE campaign_id = $1 AND dial_state = 'dialing'`,
            [target.id],
          )
        )[0].n as number;
      await waitFor(async () => ((await dialing()) === 3 ? true : undefined), 30_000);
      await workers[0].stop(); // SIGKILL, mid-dial

      workers.push(await AppProcess.start(fast, 'worker'));
      // Once the lease (5 s) has run out, the dialer's periodic look hands each dial to the new worker as a resumed
      // attempt. The look is asked for here rather than waited for: its schedule belongs to the maintenance tests.
      const dials = await waitFor(
        async () => {
          await stack.api.get(JobQueue).enqueue(Jobs.dialCampaigns, {});
          const rows = await f.dials(target.id);
          // The dial is asked of the provider first, then settled: both, for all three.
          const [{ settled }] = await stack.dataSource.query(
            `SELECT count(*)::int AS settled FROM calls WHERE campaign_id = $1 AND dial_state <> 'dialing'`,
            [target.id],
          );
          return rows.length >= 3 && settled >= 3 ? rows : undefined;
        },
        120_000,
        1000,
      );
      const calls = await stack.dataSource.query(
        `SELECT lead_id, dial_state FROM calls WHERE campaign_id = $1 ORDER BY lead_id`,
        [target.id],
      );
      expect(calls).toEqual(leads.map((lead) => ({ lead_id: lead.id, dial_state: 'dialed' })));
      expect(new Set(dials.map((dial) => dial.attempt_id)).size).toBe(3);
      expect(await f.dials(target.id)).toHaveLength(3);
    },
    UNTIL_STALLED,
  );
});
