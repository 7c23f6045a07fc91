import { randomUUID } from 'node:crypto';
import { JobQueue, Jobs } from '@app/jobs';
import { AppProcess, startAll } from './support/app-process';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { operatorCommand } from './support/operator-cli';
import { type Stack, startStack } from './support/stack';
import { UNTIL_STALLED, waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-call-concurrency-0123456789';
const runtime = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
/** The deployment's limit in this file; accounts given their own by the operator command say so. */
const DEPLOYMENT_LIMIT = 4;
const OPEN = `status IN ('initiated', 'ringing', 'in-progress')`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/**
 * An account never has more calls in progress than it may, however its calls start (`make_call`, the dialer's
 * campaigns, the voice runtime's sessions of inbound calls) and however many API and worker processes start them at
 * once: the count lives in Postgres and every new call takes its slot in the statement that writes it.
 */
describe('An account’s limit of calls in progress', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        RUNTIME_API_TOKEN: RUNTIME_TOKEN,
        ACCOUNT_MAX_CONCURRENT_CALLS: String(DEPLOYMENT_LIMIT),
        // The dialer's periodic look out of the way: held leads are dialled because calls of the account end.
        DIALER_INTERVAL_SECONDS: '3600',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const api = (owner: TestAccount) => ({
    post: (path: string, body: object) => stack.http.post(`/api/user/${path}`).set(owner.auth).send(body),
    get: (path: string) => stack.http.get(`/api/user/${path}`).set(owner.auth),
    delete: (path: string) => stack.http.delete(`/api/user/${path}`).set(owner.auth),
  });
  /** An account with an outbound assistant that can place calls and an inbound one answering its own number. */
  const account = async () => {
    const owner = await createAccount(stack);
    const languageId = (await api(owner).get('assistants/languages')).body[0].id as number;
    const number = async () =>
      (await api(owner).post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data as {
        id: number;
        phone_number: string;
      };
    const caller = await number();
    const outbound = (
      await api(owner)
        .post('assistant', { name: 'Sales', type: 'outbound', language_id: languageId, phone_number_id: caller.id })
        .expect(201)
    ).body.data as { id: number };
    const answering = await number();
    await api(owner)
      .post('assistant', {
        name: 'Front desk',
        type: 'inbound',
        language_id: languageId,
        phone_number_id: answering.id,
      })
      .expect(201);
    return { owner, caller, outbound, inboundNumber: answering.phone_number };
  };
  type Fixture = Awaited<ReturnType<typeof account>>;

  const answer = async (request: PromiseLike<{ status: number; body: unknown; headers: Record<string, string> }>) => {
    const response = await request;
    return {
      status: response.status,
      body: response.body as Record<string, unknown>,
      retryAfter: response.headers['retry-after'] ?? null,
    };
  };
  const makeCall = (fixture: Fixture, index: number) =>
    answer(
      api(fixture.owner).post('make_call', {
        phone_number: `+1415557${String(index).padStart(4, '0')}`,
        assistant_id: fixture.outbound.id,
      }),
    );
  const session = (fixture: Fixture, externalId = `inbound-${randomUUID()}`) =>
    answer(
      stack.http
        .post(`/api/internal/calls/${externalId}/session`)
        .set(runtime)
        .send({ type: 'inbound', client_phone_number: '+14155550199', assistant_phone_number: fixture.inboundNumber }),
    );
  /** The account's calls in progress as stored, and as its slot row counts them: always the same. */
  const inProgress = async (owner: TestAccount) => {
    const [row] = await stack.dataSource.query(
      `SELECT (SELECT count(*)::int FROM calls WHERE user_id = $1 AND ${OPEN}) AS calls,
              (SELECT in_progress FROM account_call_slots WHERE user_id = $1) AS counted`,
      [owner.id],
    );
    expect(row.counted).toBe(row.calls);
    return row.calls as number;
  };
  /** Ends the call as the voice runtime reports a finished one. */
  const end = (externalId: string, status = 'completed') =>
    stack.http.put(`/api/internal/calls/${externalId}`).set(runtime).send({ status, duration: 30 }).expect(200);
  const openCalls = async (owner: TestAccount): Promise<{ external_id: string; campaign_id: number | null }[]> =>
    stack.dataSource.query(`SELECT external_id, campaign_id FROM calls WHERE user_id = $1 AND ${OPEN} ORDER BY id`, [
      owner.id,
    ]);
  const setLimit = async (owner: TestAccount, ...option: string[]) => {
    const run = await operatorCommand(stack, ['accounts:max-concurrent-calls', '--user', owner.email, ...option], {
      ACCOUNT_MAX_CONCURRENT_CALLS: String(DEPLOYMENT_LIMIT),
    });
    expect(run).toMatchObject({ code: 0 });
    return JSON.parse(run.output) as Record<string, unknown>;
  };
  const expectRefused = (refused: Answer[], limit: number) => {
    for (const refusal of refused) {
      expect(refusal).toEqual({
        status: 429,
        retryAfter: '5',
        body: {
          message: `The account has reached its limit of ${limit} calls in progress at once; try again when one ends.`,
          max_concurrent_calls: limit,
        },
      });
    }
  };

  it('places exactly as many of 25 make_call sent at once as the account may, and refuses the rest with 429', async () => {
    const fixture = await account();
    const answers = await Promise.all(Array.from({ length: 25 }, (_, index) => makeCall(fixture, index)));
    const placed = answers.filter((each) => each.status === 201);
    expect(placed).toHaveLength(DEPLOYMENT_LIMIT);
    expectRefused(
      answers.filter((each) => each.status !== 201),
      DEPLOYMENT_LIMIT,
    );
    // Nothing was written for a refused call: the account's list holds the placed ones only.
    expect((await api(fixture.owner).get('calls').expect(200)).body.total).toBe(DEPLOYMENT_LIMIT);
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);

    // A call that ends gives its slot back, to exactly one new call.
    const [first] = await openCalls(fixture.owner);
    await end(first.external_id);
    const next = await Promise.all([makeCall(fixture, 100), makeCall(fixture, 101)]);
    expect(next.map((each) => each.status).sort()).toEqual([201, 429]);
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);
  });

  it('gives back the slot of a call the reaper ends, and of an open call its owner deletes', async () => {
    const fixture = await account();
    const placed = await Promise.all(Array.from({ length: DEPLOYMENT_LIMIT }, (_, index) => makeCall(fixture, index)));
    expect(placed.map((each) => each.status)).toEqual(Array(DEPLOYMENT_LIMIT).fill(201));
    expectRefused([await makeCall(fixture, 90)], DEPLOYMENT_LIMIT);

    // A runtime that died mid-call: its call is ended `failed` by the reaper, and its slot is free again.
    const [lost, deleted] = placed.map((each) => each.body.call_id as number);
    await stack.dataSource.query(`UPDATE calls SET updated_at = now() - interval '1 day' WHERE id = $1`, [lost]);
    await stack.api.get(JobQueue).enqueue(Jobs.reapStaleCalls, {});
    await waitFor(async () => ((await inProgress(fixture.owner)) === DEPLOYMENT_LIMIT - 1 ? true : undefined));
    expect((await makeCall(fixture, 91)).status).toBe(201);

    await api(fixture.owner).delete(`calls/${deleted}`).expect(200);
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT - 1);
    expect((await makeCall(fixture, 92)).status).toBe(201);
    expectRefused([await makeCall(fixture, 93)], DEPLOYMENT_LIMIT);
  });

  it('lets an operator give one account its own limit, and the deployment’s again', async () => {
    const fixture = await account();
    expect(await setLimit(fixture.owner, '--limit', '2')).toEqual({
      user_id: fixture.owner.id,
      max_concurrent_calls: 2,
      deployment_default: false,
      calls_in_progress: 0,
    });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => makeCall(fixture, index)));
    expect(answers.filter((each) => each.status === 201)).toHaveLength(2);
    expectRefused(
      answers.filter((each) => each.status !== 201),
      2,
    );
    // Another account keeps the deployment's limit.
    const other = await account();
    const theirs = await Promise.all(Array.from({ length: 6 }, (_, index) => makeCall(other, index)));
    expect(theirs.filter((each) => each.status === 201)).toHaveLength(DEPLOYMENT_LIMIT);

    expect(await setLimit(fixture.owner, '--default')).toMatchObject({
      max_concurrent_calls: DEPLOYMENT_LIMIT,
      deployment_default: true,
      calls_in_progress: 2,
    });
    expect((await makeCall(fixture, 50)).status).toBe(201);
    // 0 stops the account starting calls; those in progress go on.
    await setLimit(fixture.owner, '--limit', '0');
    expectRefused([await makeCall(fixture, 51)], 0);
    expect(await inProgress(fixture.owner)).toBe(3);

    const refuse = async (...args: string[]) =>
      operatorCommand(stack, ['accounts:max-concurrent-calls', ...args], {
        ACCOUNT_MAX_CONCURRENT_CALLS: String(DEPLOYMENT_LIMIT),
      });
    expect(await refuse('--user', fixture.owner.email)).toMatchObject({ code: 2 });
    expect(await refuse('--user', fixture.owner.email, '--limit=-1')).toMatchObject({ code: 2 });
    expect(await refuse('--user', fixture.owner.email, '--limit', '3', '--default')).toMatchObject({ code: 2 });
  }, 120_000);

  it('answers racing inbound sessions within the limit; a session of a call already admitted is never refused', async () => {
    const fixture = await account();
    const externalIds = Array.from({ length: 12 }, () => `inbound-${randomUUID()}`);
    // Each call's session sent twice at once, as a runtime retrying would: twelve calls, twenty-four sessions.
    const answers = await Promise.all([...externalIds, ...externalIds].map((id) => session(fixture, id)));
    const admitted = new Set(
      answers
        .map((each, index) => (each.status < 300 ? [...externalIds, ...externalIds][index] : undefined))
        .filter((id) => id !== undefined),
    );
    expect(admitted.size).toBe(DEPLOYMENT_LIMIT);
    expectRefused(
      answers.filter((each) => each.status >= 300),
      DEPLOYMENT_LIMIT,
    );
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);
    // A refused call was not recorded; an admitted call's session opens again at the limit (the runtime's retry).
    const [{ count }] = await stack.dataSource.query(`SELECT count(*)::int AS count FROM calls WHERE user_id = $1`, [
      fixture.owner.id,
    ]);
    expect(count).toBe(DEPLOYMENT_LIMIT);
    const again = await session(fixture, [...admitted][0]);
    expect(again.status).toBe(200);
    expectRefused([await session(fixture)], DEPLOYMENT_LIMIT);

    // Ended (by its final write), a call frees its slot for the next caller.
    await end([...admitted][1], 'ended_by_customer');
    expect((await session(fixture)).status).toBe(201);
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);
  });

  it('shares the limit between a campaign, make_call and inbound calls: the dialer holds its leads, loses none', async () => {
    const fixture = await account();
    const leads = 8;
    const campaign = (
      await api(fixture.owner)
        .post('campaign', {
          name: 'Renewals',
          assistant_id: fixture.outbound.id,
          phone_number_ids: [fixture.caller.id],
          max_calls_in_parallel: 6,
        })
        .expect(201)
    ).body.data as { id: number };
    for (let index = 0; index < leads; index++) {
      await api(fixture.owner)
        .post('lead', { phone_number: `+1415558${String(index).padStart(4, '0')}`, campaign_id: campaign.id })
        .expect(201);
    }
    // Watches the account's calls in progress throughout, as often as the database answers.
    let most = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [{ open }] = await stack.dataSource.query(
          `SELECT count(*)::int AS open FROM calls WHERE user_id = $1 AND ${OPEN}`,
          [fixture.owner.id],
        );
        most = Math.max(most, open);
      }
    })();
    try {
      const [started, ...answers] = await Promise.all([
        api(fixture.owner).post('campaigns/update-status', { campaign_id: campaign.id, action: 'start' }),
        ...Array.from({ length: 5 }, (_, index) => makeCall(fixture, index)),
        ...Array.from({ length: 5 }, () => session(fixture)),
      ]);
      expect(started.status).toBe(200);
      // The dialer claims what is left when the campaign starts: then the account is full, and no more.
      await waitFor(async () => ((await inProgress(fixture.owner)) === DEPLOYMENT_LIMIT ? true : undefined));
      const refused = (answers as Answer[]).filter((each) => each.status === 429);
      const admitted = answers.length - refused.length;
      expectRefused(refused, DEPLOYMENT_LIMIT);
      expect(admitted).toBeLessThanOrEqual(DEPLOYMENT_LIMIT);
      // The held leads wait as they were: nothing failed, nothing was spent.
      const held = await stack.dataSource.query(
        `SELECT status, attempts FROM leads WHERE campaign_id = $1 AND status NOT IN ('scheduled', 'processing')`,
        [campaign.id],
      );
      expect(held).toHaveLength(leads - (DEPLOYMENT_LIMIT - admitted));
      expect(held.every((lead: { status: string; attempts: number }) => lead.status === 'created')).toBe(true);

      // As the account's calls end (the campaign's own, make_call's, inbound ones), the campaign gets their slots at
      // once, until every lead was called once.
      await waitFor(
        async () => {
          for (const call of await openCalls(fixture.owner)) await end(call.external_id);
          const [{ done }] = await stack.dataSource.query(
            `SELECT count(*)::int AS done FROM leads WHERE campaign_id = $1 AND status = 'completed'`,
            [campaign.id],
          );
          return done === leads ? true : undefined;
        },
        60_000,
        200,
      );
    } finally {
      watching = false;
      await watcher;
    }
    expect(most).toBeLessThanOrEqual(DEPLOYMENT_LIMIT);
    const [calls] = await stack.dataSource.query(
      `SELECT count(*)::int AS placed, count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM calls WHERE campaign_id = $1`,
      [campaign.id],
    );
    expect(calls).toEqual({ placed: leads, failed: 0 });
    expect(await inProgress(fixture.owner)).toBe(0);
  }, 120_000);

  it('dials a held campaign’s lead as soon as another call of the account ends', async () => {
    const fixture = await account();
    const placed = await Promise.all(Array.from({ length: DEPLOYMENT_LIMIT }, (_, index) => makeCall(fixture, index)));
    expect(placed.map((each) => each.status)).toEqual(Array(DEPLOYMENT_LIMIT).fill(201));
    const campaign = (
      await api(fixture.owner)
        .post('campaign', { name: 'Held', assistant_id: fixture.outbound.id, phone_number_ids: [fixture.caller.id] })
        .expect(201)
    ).body.data as { id: number };
    for (const phone of ['+14155580001', '+14155580002']) {
      await api(fixture.owner).post('lead', { phone_number: phone, campaign_id: campaign.id }).expect(201);
    }
    await api(fixture.owner).post('campaigns/update-status', { campaign_id: campaign.id, action: 'start' }).expect(200);
    // The start's claim found the account full: its leads wait as they are, and the account says a campaign waits.
    await waitFor(async () => {
      const [row] = await stack.dataSource.query(
        `SELECT campaigns_waiting FROM account_call_slots WHERE user_id = $1`,
        [fixture.owner.id],
      );
      return row.campaigns_waiting ? true : undefined;
    });
    const leadStatuses = async () =>
      (await stack.dataSource.query(`SELECT status FROM leads WHERE campaign_id = $1 ORDER BY id`, [campaign.id])).map(
        (lead: { status: string }) => lead.status,
      ) as string[];
    expect(await leadStatuses()).toEqual(['created', 'created']);

    // A make_call's call ends: the campaign is looked at then, not at the dialer's next periodic look (an hour).
    const [first] = await openCalls(fixture.owner);
    await end(first.external_id);
    await waitFor(async () => ((await leadStatuses()).includes('scheduled') ? true : undefined));
    expect(await leadStatuses()).toEqual(['scheduled', 'created']);
    expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);
  });

  describe('with two more API processes', () => {
    const apis: AppProcess[] = [];
    beforeAll(async () => {
      const env = { RUNTIME_API_TOKEN: RUNTIME_TOKEN, ACCOUNT_MAX_CONCURRENT_CALLS: String(DEPLOYMENT_LIMIT) };
      await startAll(apis, [() => AppProcess.start(env, 'api'), () => AppProcess.start(env, 'api')]);
    }, UNTIL_STALLED);
    afterAll(async () => {
      await Promise.all(apis.map((child) => child.stop()));
    });

    it('holds the limit across processes, make_call and sessions sent to each at once', async () => {
      const fixture = await account();
      const send = async (target: AppProcess, path: string, body: object, headers: Record<string, string>) => {
        const response = await fetch(`${target.baseUrl}${path}`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        return {
          status: response.status,
          body: (await response.json()) as Record<string, unknown>,
          retryAfter: response.headers.get('retry-after'),
        };
      };
      const answers: Answer[] = await Promise.all(
        Array.from({ length: 24 }, (_, index) => {
          const target = apis[index % 2];
          return index % 3 === 0
            ? send(
                target,
                `/internal/calls/inbound-${randomUUID()}/session`,
                { type: 'inbound', client_phone_number: '+14155550199', assistant_phone_number: fixture.inboundNumber },
                runtime,
              )
            : send(
                target,
                '/user/make_call',
                { phone_number: `+1415559${String(index).padStart(4, '0')}`, assistant_id: fixture.outbound.id },
                fixture.owner.auth,
              );
        }),
      );
      expect(answers.filter((each) => each.status < 300)).toHaveLength(DEPLOYMENT_LIMIT);
      expectRefused(
        answers.filter((each) => each.status >= 300),
        DEPLOYMENT_LIMIT,
      );
      expect(await inProgress(fixture.owner)).toBe(DEPLOYMENT_LIMIT);
    });
  });
});
