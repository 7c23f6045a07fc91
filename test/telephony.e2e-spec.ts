import { JobQueue, Jobs } from '@app/jobs';
import { type LocalSipProvisioner, SIP_PROVISIONER } from '@app/telephony';
import { createAccount, type TestAccount, unheldNumber } from './support/factories';
import { assignNumber } from './support/operator-cli';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const SECRET = 'pw-NEVER-SHOWN-123';

const trunkBody = (overrides: Record<string, unknown> = {}) => ({
  sip_trunk_type: 'number',
  phone_number: unheldNumber(),
  sip_username: 'acme-user',
  sip_password: SECRET,
  sip_address: 'sip.carrier.example.com',
  ...overrides,
});

describe('SIP trunks and phone numbers', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let provider: LocalSipProvisioner;

  beforeAll(async () => {
    stack = await startStack({ env: { SIP_OUTBOUND_PROXY_ADDRESS: 'egress.voice.example.net' } });
    provider = stack.worker!.get(SIP_PROVISIONER);
    account = await createAccount(stack);
    other = await createAccount(stack);
  });
  afterAll(() => stack.close());

  const createTrunk = (body: object = trunkBody(), owner = account) =>
    stack.http.post('/api/user/phone-numbers/sip-trunks').set(owner.auth).send(body);
  const updateTrunk = (id: number, body: object, owner = account) =>
    stack.http.put(`/api/user/phone-numbers/sip-trunks/${id}`).set(owner.auth).send(body);
  /** Waits until every replaced trunk has been deleted at the provider. */
  const cleanedUp = () =>
    waitFor(async () => {
      const [{ n }] = await stack.dataSource.query('SELECT count(*)::int AS n FROM provider_cleanups');
      return n === 0 ? true : undefined;
    }, 15_000);

  it('creates a trunk with provisioned inbound and outbound trunks, and lists it', async () => {
    const number = unheldNumber();
    const response = await createTrunk(trunkBody({ phone_number: number, nickname: 'Main line', id: 5 })).expect(201);
    const trunk = response.body.data;
    expect(response.body.message).toBe('SIP trunk created successfully.');
    expect(trunk).toEqual({
      id: expect.any(Number),
      sip_trunk_type: 'number',
      phone_number: number,
      nickname: 'Main line',
      sip_username: 'acme-user',
      sip_address: 'sip.carrier.example.com',
      sip_calling_format: '+e164',
      inbound_authorization_type: 'auth',
      allowed_inbound_ips: null,
      outbound_proxy: false,
      country_code: 'US',
      inbound_trunk_id: expect.stringMatching(/^ST_/),
      outbound_trunk_id: expect.stringMatching(/^ST_/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(provider.trunks.get(trunk.inbound_trunk_id)?.spec).toMatchObject({
      numbers: [number],
      credentials: { username: 'acme-user', password: SECRET },
    });
    expect(provider.trunks.get(trunk.outbound_trunk_id)?.spec).toMatchObject({
      address: 'sip.carrier.example.com',
      numbers: [number],
      destinationCountry: 'US',
    });

    const list = await stack.http.get('/api/user/phone-numbers/sip-trunks').set(account.auth).expect(200);
    expect(list.body.data.map((item: { id: number }) => item.id)).toContain(trunk.id);
    const all = await stack.http.get('/api/user/phone-numbers/all').set(account.auth).expect(200);
    expect(all.body.data.find((number: { id: number }) => number.id === trunk.id)).toEqual({
      id: trunk.id,
      phone_number: number,
      nickname: 'Main line',
      country_code: 'US',
      type: 'sip',
      type_label: 'SIP',
      sms_capable: false,
      region: 'sip.carrier.example.com',
      has_active_subscription: true,
      server_url: null,
      server_timeout_ms: 2000,
      server_secret: null,
      created_at: trunk.created_at,
    });
    const legacy = await stack.http.get('/api/user/phone-numbers').set(account.auth).expect(200);
    expect(legacy.body.data.map((number: { id: number }) => number.id)).not.toContain(trunk.id);
  });

  it('lists numbers and trunks newest first, and a number without a region with an empty one', async () => {
    const owner = await createAccount(stack);
    const first = (await createTrunk(trunkBody(), owner).expect(201)).body.data.id;
    const second = (await createTrunk(trunkBody(), owner).expect(201)).body.data.id;
    const [bought] = await stack.dataSource.query(
      `INSERT INTO phone_numbers (user_id, phone_number, country_code, type, sms_capable)
       VALUES ($1, $2, 'US', 'normal', true) RETURNING id`,
      [owner.id, unheldNumber()],
    );
    const ids = async (path: string) =>
      (await stack.http.get(path).set(owner.auth).expect(200)).body.data.map((item: { id: number }) => item.id);
    expect(await ids('/api/user/phone-numbers/all')).toEqual([bought.id, second, first]);
    expect(await ids('/api/user/phone-numbers/sip-trunks')).toEqual([second, first]);
    const legacy = (await stack.http.get('/api/user/phone-numbers').set(owner.auth).expect(200)).body.data;
    expect(legacy).toEqual([expect.objectContaining({ id: bought.id, region: '' })]);
  });

  it('normalises a national number to E.164 with the country given', async () => {
    const response = await createTrunk(trunkBody({ phone_number: '020 7946 0018', country_code: 'GB' })).expect(201);
    expect(response.body.data).toMatchObject({ phone_number: '+442079460018', country_code: 'GB' });
  });

  it('keeps the password out of every response and unreadable in the row', async () => {
    const created = await createTrunk(trunkBody()).expect(201);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);
    const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${created.body.data.id}`).set(account.auth);
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    expect(read.body.data).not.toHaveProperty('sip_password');
    const [row] = await stack.dataSource.query(
      'SELECT row_to_json(t)::text AS row FROM sip_trunks t WHERE phone_number_id = $1',
      [created.body.data.id],
    );
    expect(row.row).not.toContain(SECRET);
  });

  describe('re-provisioning on update', () => {
    it.each([
      ['sip_username', { sip_username: 'new-user' }, true, true],
      ['sip_password', { sip_password: 'another-secret' }, true, true],
      ['sip_address', { sip_address: '203.0.113.10' }, false, true],
      ['phone_number', { phone_number: unheldNumber() }, true, true],
      [
        'inbound_authorization_type',
        { inbound_authorization_type: 'ip', allowed_inbound_ips: ['198.51.100.0/24'] },
        true,
        false,
      ],
      ['outbound_proxy', { outbound_proxy: true }, false, true],
      ['sip_calling_format', { sip_calling_format: 'national' }, false, false],
      ['country_code', { country_code: 'CA' }, false, false],
      ['nickname', { nickname: 'Renamed' }, false, false],
      ['an unchanged value', { sip_username: 'acme-user', sip_address: 'sip.carrier.example.com' }, false, false],
    ])('re-creates exactly the trunks the spec names when %s changes', async (_field, change, inbound, outbound) => {
      const before = (await createTrunk(trunkBody()).expect(201)).body.data;
      const after = (await updateTrunk(before.id, change).expect(200)).body.data;
      expect({ inboundChanged: after.inbound_trunk_id !== before.inbound_trunk_id }).toEqual({
        inboundChanged: inbound,
      });
      expect({ outboundChanged: after.outbound_trunk_id !== before.outbound_trunk_id }).toEqual({
        outboundChanged: outbound,
      });
      await cleanedUp();
      // The provider holds exactly the trunks the row names: new ones made, old ones gone.
      expect(provider.trunks.has(after.inbound_trunk_id)).toBe(true);
      expect(provider.trunks.has(after.outbound_trunk_id)).toBe(true);
      if (inbound) expect(provider.trunks.has(before.inbound_trunk_id)).toBe(false);
      if (outbound) expect(provider.trunks.has(before.outbound_trunk_id)).toBe(false);
    });

    it('re-creates the inbound trunk when the allowed addresses change, and clears them when switching to auth', async () => {
      const before = (
        await createTrunk(
          trunkBody({
            inbound_authorization_type: 'ip',
            allowed_inbound_ips: ['198.51.100.7'],
          }),
        ).expect(201)
      ).body.data;
      expect(before.allowed_inbound_ips).toEqual(['198.51.100.7']);
      expect(provider.trunks.get(before.inbound_trunk_id)?.spec).toMatchObject({ allowedAddresses: ['198.51.100.7'] });
      const changed = (
        await updateTrunk(before.id, { allowed_inbound_ips: ['198.51.100.8', '2001:db8::/32'] }).expect(200)
      ).body.data;
      expect(changed.inbound_trunk_id).not.toBe(before.inbound_trunk_id);
      expect(changed.outbound_trunk_id).toBe(before.outbound_trunk_id);
      const auth = (await updateTrunk(before.id, { inbound_authorization_type: 'auth' }).expect(200)).body.data;
      expect(auth.allowed_inbound_ips).toBeNull();
      expect(provider.trunks.get(auth.inbound_trunk_id)?.spec).toMatchObject({
        credentials: { username: 'acme-user' },
      });
    });

    it('clears the nickname with null and serves the update from the stored values', async () => {
      const before = (await createTrunk(trunkBody({ nickname: 'Old' })).expect(201)).body.data;
      const after = (await updateTrunk(before.id, { nickname: null }).expect(200)).body;
      expect(after.message).toBe('SIP trunk updated successfully.');
      expect(after.data.nickname).toBeNull();
    });
  });

  describe('validation', () => {
    it.each([
      [{ sip_trunk_type: 'pbx' }, 'sip_trunk_type', 'The selected sip trunk type is invalid.'],
      [{ phone_number: '' }, 'phone_number', 'The phone number field is required.'],
      [
        { phone_number: '1234567890123456' },
        'phone_number',
        'The phone number field must not be greater than 15 characters.',
      ],
      [{ phone_number: '+1 415' }, 'phone_number', 'The phone number field must be a valid phone number.'],
      [{ phone_number: '+1;415' }, 'phone_number', 'The phone number field format is invalid.'],
      [{ phone_number: '+1415555' }, 'phone_number', 'The phone number field must be a valid phone number.'],
      [{ sip_username: 'ab' }, 'sip_username', 'The sip username field must be at least 3 characters.'],
      [
        { sip_username: 'u'.repeat(129) },
        'sip_username',
        'The sip username field must not be greater than 128 characters.',
      ],
      [{ sip_password: 'pw' }, 'sip_password', 'The sip password field must be at least 3 characters.'],
      [
        { sip_address: 'sip:carrier.example.com' },
        'sip_address',
        'The sip address field must be a hostname or IP address, without scheme or port.',
      ],
      [
        { sip_address: 'carrier.example.com:5060' },
        'sip_address',
        'The sip address field must be a hostname or IP address, without scheme or port.',
      ],
      [{ nickname: 'n'.repeat(51) }, 'nickname', 'The nickname field must not be greater than 50 characters.'],
      [{ sip_calling_format: 'e123' }, 'sip_calling_format', 'The selected sip calling format is invalid.'],
      [
        { inbound_authorization_type: 'token' },
        'inbound_authorization_type',
        'The selected inbound authorization type is invalid.',
      ],
      [
        { inbound_authorization_type: 'ip' },
        'allowed_inbound_ips',
        'The allowed inbound ips field is required when inbound authorization type is ip.',
      ],
      [
        { inbound_authorization_type: 'ip', allowed_inbound_ips: [] },
        'allowed_inbound_ips',
        'The allowed inbound ips field must have at least 1 items.',
      ],
      [
        { inbound_authorization_type: 'ip', allowed_inbound_ips: ['1.2.3.4', 'not-an-ip'] },
        'allowed_inbound_ips.1',
        'The allowed inbound ips.1 field must be a valid IP address or CIDR range.',
      ],
      [
        { allowed_inbound_ips: ['198.51.100.7'] },
        'allowed_inbound_ips',
        'The allowed inbound ips field is prohibited unless inbound authorization type is in ip.',
      ],
      [
        { inbound_authorization_type: 'auth', allowed_inbound_ips: ['198.51.100.7'] },
        'allowed_inbound_ips',
        'The allowed inbound ips field is prohibited unless inbound authorization type is in ip.',
      ],
      [{ country_code: 'usa' }, 'country_code', 'The country code field format is invalid.'],
      [{ country_code: 'ZZ' }, 'country_code', 'The selected country code is invalid.'],
      [{ outbound_proxy: 'yes' }, 'outbound_proxy', 'The outbound proxy field must be true or false.'],
      [
        { sip_trunk_type: 'extension', phone_number: '201' },
        'country_code',
        'The country code field is required when sip trunk type is extension.',
      ],
    ])('refuses %j on %s', async (overrides, field, message) => {
      const response = await createTrunk(trunkBody(overrides));
      expect({ status: response.status, errors: response.body.errors?.[field] }).toEqual({
        status: 422,
        errors: [message],
      });
    });

    it('accepts an extension trunk', async () => {
      const response = await createTrunk(
        trunkBody({ sip_trunk_type: 'extension', phone_number: '201', country_code: 'DE' }),
      ).expect(201);
      expect(response.body.data).toMatchObject({
        sip_trunk_type: 'extension',
        phone_number: '201',
        country_code: 'DE',
      });
    });

    it('refuses allowed addresses for a trunk that authenticates by credentials, and changes nothing', async () => {
      const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
      const response = await updateTrunk(trunk.id, { allowed_inbound_ips: ['198.51.100.7'] }).expect(422);
      expect(response.body.errors).toEqual({
        allowed_inbound_ips: [
          'The allowed inbound ips field is prohibited unless inbound authorization type is in ip.',
        ],
      });
      const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`).set(account.auth).expect(200);
      expect(read.body.data).toEqual(trunk);
    });

    it('refuses switching to ip on update without addresses, and changes nothing', async () => {
      const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
      const response = await updateTrunk(trunk.id, { inbound_authorization_type: 'ip' });
      expect(response.status).toBe(422);
      expect(Object.keys(response.body.errors)).toEqual(['allowed_inbound_ips']);
      const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`).set(account.auth).expect(200);
      expect(read.body.data).toEqual(trunk);
    });
  });

  describe('provider failures', () => {
    const providerTrunks = () => new Set(provider.trunks.keys());

    it.each(['createInbound', 'createOutbound'] as const)(
      'leaves nothing behind when a create fails at %s',
      async (step) => {
        const before = providerTrunks();
        const numbers = (await stack.http.get('/api/user/phone-numbers/all').set(account.auth)).body.data.length;
        provider.failNext(step);
        const response = await createTrunk(trunkBody());
        expect(response.status).toBe(502);
        expect(response.body).toEqual({ error: 'Failed to create SIP trunk. Please try again or contact support.' });
        expect(providerTrunks()).toEqual(before);
        expect((await stack.http.get('/api/user/phone-numbers/all').set(account.auth)).body.data).toHaveLength(numbers);
      },
    );

    it.each(['createInbound', 'createOutbound'] as const)(
      'leaves the trunk as it was when an update fails at %s',
      async (step) => {
        const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
        const before = providerTrunks();
        provider.failNext(step);
        const response = await updateTrunk(trunk.id, { sip_username: 'changed-user', nickname: 'Changed' });
        expect(response.status).toBe(502);
        expect(response.body).toEqual({ error: 'Failed to update SIP trunk. Please try again or contact support.' });
        expect(providerTrunks()).toEqual(before);
        const read = await stack.http
          .get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`)
          .set(account.auth)
          .expect(200);
        expect(read.body.data).toEqual(trunk);
      },
    );

    it('keeps an old trunk whose deletion failed recorded, and deletes it on a later run', async () => {
      const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
      provider.failNext('deleteOutbound', 2);
      const updated = (await updateTrunk(trunk.id, { sip_address: 'sip2.carrier.example.com' }).expect(200)).body.data;
      expect(updated.outbound_trunk_id).not.toBe(trunk.outbound_trunk_id);
      await waitFor(async () => {
        const rows = await stack.dataSource.query('SELECT attempts FROM provider_cleanups WHERE trunk_id = $1', [
          trunk.outbound_trunk_id,
        ]);
        return rows[0]?.attempts >= 1 ? true : undefined;
      }, 15_000);
      expect(provider.trunks.has(trunk.outbound_trunk_id)).toBe(true);
      // Later runs retry it (one at a time: two at once would each skip the row the other holds).
      const attempts = async () =>
        ((
          await stack.dataSource.query('SELECT attempts FROM provider_cleanups WHERE trunk_id = $1', [
            trunk.outbound_trunk_id,
          ])
        )[0]?.attempts as number | undefined) ?? Infinity;
      for (let run = 0; run < 5 && provider.trunks.has(trunk.outbound_trunk_id); run++) {
        const before = await attempts();
        await stack.api.get(JobQueue).enqueue(Jobs.cleanUpProviderTrunks, {});
        await waitFor(
          async () => (!provider.trunks.has(trunk.outbound_trunk_id) || (await attempts()) > before ? true : undefined),
          15_000,
        );
      }
      expect(provider.trunks.has(trunk.outbound_trunk_id)).toBe(false);
      await cleanedUp();
    });

    it('serialises two updates of one trunk and ends with one live trunk pair', async () => {
      const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
      const [first, second] = await Promise.all([
        updateTrunk(trunk.id, { sip_username: 'first-user' }),
        updateTrunk(trunk.id, { sip_password: 'second-secret' }),
      ]);
      expect([first.status, second.status]).toEqual([200, 200]);
      await cleanedUp();
      const read = (
        await stack.http.get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`).set(account.auth).expect(200)
      ).body.data;
      expect(read.sip_username).toBe('first-user');
      const mine = [...provider.trunks.values()].filter((item) => item.spec.name.startsWith(`trunk-${trunk.id}-`));
      expect(mine.map((item) => item.id).sort()).toEqual([read.inbound_trunk_id, read.outbound_trunk_id].sort());
      expect(provider.trunks.get(read.inbound_trunk_id)?.spec).toMatchObject({
        credentials: { username: 'first-user', password: 'second-secret' },
      });
    });
  });

  describe('deleting and privacy', () => {
    it('deletes a trunk through the phone-number route and removes both provider trunks', async () => {
      const trunk = (await createTrunk(trunkBody()).expect(201)).body.data;
      await stack.http
        .delete(`/api/user/phone-numbers/${trunk.id}`)
        .set(account.auth)
        .expect(200, { message: 'Phone number deleted successfully.' });
      await waitFor(
        async () =>
          provider.trunks.has(trunk.inbound_trunk_id) || provider.trunks.has(trunk.outbound_trunk_id)
            ? undefined
            : true,
        15_000,
      );
      await stack.http
        .get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`)
        .set(account.auth)
        .expect(404, { error: 'SIP trunk not found.' });
      await stack.http
        .delete(`/api/user/phone-numbers/${trunk.id}`)
        .set(account.auth)
        .expect(404, { error: 'Phone number not found.' });
    });

    it('treats another account’s trunk and number exactly like missing ones', async () => {
      const theirs = (await createTrunk(trunkBody(), other).expect(201)).body.data;
      await stack.http
        .get(`/api/user/phone-numbers/sip-trunks/${theirs.id}`)
        .set(account.auth)
        .expect(404, { error: 'SIP trunk not found.' });
      await updateTrunk(theirs.id, { nickname: 'mine now' }).expect(404, { error: 'SIP trunk not found.' });
      await stack.http
        .delete(`/api/user/phone-numbers/${theirs.id}`)
        .set(account.auth)
        .expect(404, { error: 'Phone number not found.' });
      for (const path of [
        '/api/user/phone-numbers/sip-trunks',
        '/api/user/phone-numbers/all',
        '/api/user/phone-numbers',
      ]) {
        const list = await stack.http.get(path).set(account.auth).expect(200);
        expect(list.body.data.map((item: { id: number }) => item.id)).not.toContain(theirs.id);
      }
      const still = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${theirs.id}`).set(other.auth).expect(200);
      expect(still.body.data.nickname).toBeNull();
    });
  });

  const assign = (email: string, number: string) => assignNumber(stack, email, number);
  /** The national form of an E.164 US number, as an operator might type it: `+1 415 555 0177`. */
  const spaced = (e164: string) => `${e164.slice(0, 2)} ${e164.slice(2, 5)} ${e164.slice(5, 8)} ${e164.slice(8)}`;

  it('assigns a purchased number with the operator command, shown in both lists when SMS-capable', async () => {
    const number = unheldNumber();
    expect(await assign(account.email, spaced(number))).toEqual({
      code: 0,
      output: expect.stringContaining(`"phone_number":"${number}"`),
    });
    const legacy = await stack.http.get('/api/user/phone-numbers').set(account.auth).expect(200);
    expect(legacy.body.data).toContainEqual(
      expect.objectContaining({
        phone_number: number,
        type: 'normal',
        type_label: 'Normal',
        sms_capable: true,
        region: 'CA',
        has_active_subscription: true,
        country_code: 'US',
      }),
    );
  }, 60_000);

  describe('one number, one holder', () => {
    const holders = async (number: string) =>
      (
        await stack.dataSource.query('SELECT user_id FROM phone_numbers WHERE phone_number = $1 ORDER BY id', [number])
      ).map((row: { user_id: number }) => row.user_id);
    const taken = {
      message: 'The phone number has already been taken.',
      errors: { phone_number: ['The phone number has already been taken.'] },
    };

    it.each([
      ['in the same account', () => account],
      ['in another account', () => other],
    ])('refuses a trunk whose number a trunk %s holds, and provisions nothing', async (_where, second) => {
      const number = unheldNumber();
      await createTrunk(trunkBody({ phone_number: number })).expect(201);
      const trunks = new Set(provider.trunks.keys());
      // The same number spelt another way is the same number.
      const response = await createTrunk(trunkBody({ phone_number: spaced(number) }), second());
      expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: taken });
      expect(new Set(provider.trunks.keys())).toEqual(trunks);
      expect(await holders(number)).toEqual([account.id]);
    });

    it('refuses an extension the provider already routes for another account, as LiveKit does, and the same account twice', async () => {
      const extension = trunkBody({ sip_trunk_type: 'extension', phone_number: '4711', country_code: 'DE' });
      await createTrunk(extension).expect(201);
      const trunks = new Set(provider.trunks.keys());
      // The database lets each account have its own extensions, but the provider routes a call by the number alone.
      const theirs = await createTrunk(extension, other);
      expect({ status: theirs.status, body: theirs.body }).toEqual({ status: 422, body: taken });
      expect(new Set(provider.trunks.keys())).toEqual(trunks);
      const again = await createTrunk(extension);
      expect({ status: again.status, body: again.body }).toEqual({ status: 422, body: taken });
    });

    it('gives a number raced for by two accounts to exactly one of them', async () => {
      const number = unheldNumber();
      const trunks = provider.trunks.size;
      const answers = await Promise.all([
        createTrunk(trunkBody({ phone_number: number })),
        createTrunk(trunkBody({ phone_number: number }), other),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422]);
      expect(await holders(number)).toHaveLength(1);
      // The winner's inbound and outbound trunks, nothing for the loser.
      await cleanedUp();
      expect(provider.trunks.size).toBe(trunks + 2);
    });

    it('refuses an update to a number another trunk holds, and changes nothing', async () => {
      const held = (await createTrunk(trunkBody(), other).expect(201)).body.data;
      const mine = (await createTrunk(trunkBody()).expect(201)).body.data;
      const response = await updateTrunk(mine.id, { phone_number: held.phone_number, nickname: 'Taken' });
      expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: taken });
      const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${mine.id}`).set(account.auth).expect(200);
      expect(read.body.data).toEqual(mine);
      // Keeping its own number is no conflict.
      await updateTrunk(mine.id, { phone_number: mine.phone_number }).expect(200);
    });

    it('has the worker refuse a change to a number taken after the API checked, before the provider sees it', async () => {
      const held = (await createTrunk(trunkBody(), other).expect(201)).body.data;
      const mine = (await createTrunk(trunkBody()).expect(201)).body.data;
      const trunks = new Set(provider.trunks.keys());
      // A request as the API queues it, for a number that was free when it was checked.
      const [request] = await stack.dataSource.query(
        `INSERT INTO sip_provisioning_requests (phone_number_id, kind, changes) VALUES ($1, 'update', $2) RETURNING id`,
        [mine.id, JSON.stringify({ phone_number: held.phone_number })],
      );
      await stack.api.get(JobQueue).enqueue(Jobs.provisionSipTrunk, { requestId: request.id });
      const settled = await waitFor(async () => {
        const [row] = await stack.dataSource.query(
          `SELECT status, error FROM sip_provisioning_requests WHERE id = $1 AND status <> 'pending'`,
          [request.id],
        );
        return row;
      }, 15_000);
      expect(settled).toEqual({ status: 'failed', error: 'The phone number has already been taken.' });
      expect(new Set(provider.trunks.keys())).toEqual(trunks);
      const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${mine.id}`).set(account.auth).expect(200);
      expect(read.body.data).toEqual(mine);
    });

    it('refuses to assign a number a trunk holds, and a trunk for an assigned number', async () => {
      const trunk = (await createTrunk(trunkBody(), other).expect(201)).body.data;
      const refused = await assign(account.email, trunk.phone_number);
      expect(refused).toEqual({
        code: 2,
        output: `${trunk.phone_number} is held by an account already; release it there first\n`,
      });
      expect(await holders(trunk.phone_number)).toEqual([other.id]);

      const number = unheldNumber();
      expect((await assign(account.email, number)).code).toBe(0);
      const response = await createTrunk(trunkBody({ phone_number: number }), other);
      expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: taken });
    }, 60_000);
  });
});

describe('SIP trunk provisioning that outlives the wait', () => {
  let stack: Stack;
  let account: TestAccount;
  let provider: LocalSipProvisioner;

  beforeAll(async () => {
    stack = await startStack({ env: { SIP_PROVISION_TIMEOUT_SECONDS: '1' } });
    provider = stack.worker!.get(SIP_PROVISIONER);
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  it('answers 502 on timeout, and the late result leaves the trunk and the provider as they were', async () => {
    const trunk = (
      await stack.http.post('/api/user/phone-numbers/sip-trunks').set(account.auth).send(trunkBody()).expect(201)
    ).body.data;
    const before = new Set(provider.trunks.keys());
    provider.delayNext('createOutbound', 2_500);
    const response = await stack.http
      .put(`/api/user/phone-numbers/sip-trunks/${trunk.id}`)
      .set(account.auth)
      .send({ sip_username: 'late-user' });
    expect(response.status).toBe(502);
    // The worker finishes after the answer: what it made is taken back.
    await waitFor(async () => {
      const [request] = await stack.dataSource.query(
        `SELECT count(*)::int AS n FROM sip_provisioning_requests WHERE status = 'abandoned'`,
      );
      return request.n === 1 && provider.log.filter((entry) => entry.operation === 'deleteInbound').length >= 1
        ? true
        : undefined;
    }, 15_000);
    await waitFor(async () => (new Set(provider.trunks.keys()).size === before.size ? true : undefined), 15_000);
    expect(new Set(provider.trunks.keys())).toEqual(before);
    const read = await stack.http.get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`).set(account.auth).expect(200);
    expect(read.body.data).toEqual(trunk);
  }, 45_000);
});

describe('SIP trunk changes when the queue does not answer', () => {
  it('answers 503 with the spec’s {error} and keeps the trunk, and keeps no half-made trunk', async () => {
    const healthy = await startStack();
    const account = await createAccount(healthy);
    const trunk = (
      await healthy.http.post('/api/user/phone-numbers/sip-trunks').set(account.auth).send(trunkBody()).expect(201)
    ).body.data;
    await healthy.close();

    // A queue backend that does not answer: Redis at an address where nothing listens.
    const broken = await startStack({
      worker: false,
      env: { QUEUE_BACKEND: 'redis', REDIS_URL: 'redis://127.0.0.1:1' },
    });
    try {
      const update = await broken.http
        .put(`/api/user/phone-numbers/sip-trunks/${trunk.id}`)
        .set(account.auth)
        .send({ sip_username: 'never-applied', nickname: 'Never' });
      expect(update.status).toBe(503);
      expect(update.body).toEqual({ error: 'Failed to update SIP trunk. Please try again or contact support.' });
      const read = await broken.http
        .get(`/api/user/phone-numbers/sip-trunks/${trunk.id}`)
        .set(account.auth)
        .expect(200);
      expect(read.body.data).toEqual(trunk);

      const create = await broken.http.post('/api/user/phone-numbers/sip-trunks').set(account.auth).send(trunkBody());
      expect(create.status).toBe(503);
      expect(create.body).toEqual({ error: 'Failed to create SIP trunk. Please try again or contact support.' });
      const list = await broken.http.get('/api/user/phone-numbers/sip-trunks').set(account.auth).expect(200);
      expect(list.body.data.map((each: { id: number }) => each.id)).toEqual([trunk.id]);
    } finally {
      await broken.close();
    }
  }, 45_000);
});
