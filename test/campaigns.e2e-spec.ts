import { JobQueue, Jobs } from '@app/jobs';
import { AppProcess } from './support/app-process';
import { createAccount, type TestAccount, unheldNumber } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { UNTIL_STALLED, waitFor, waitWhileProgressing } from './support/wait-for';

describe('Campaigns and leads', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let english: number;
  let outbound: number;
  let inbound: number;

  beforeAll(async () => {
    stack = await startStack();
    account = await createAccount(stack);
    other = await createAccount(stack);
    const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
    english = languages.find((language: { iso_2: string }) => language.iso_2 === 'en').id;
    outbound = (await post('assistant', { name: 'Caller', type: 'outbound', language_id: english }).expect(201)).body
      .data.id;
    inbound = (await post('assistant', { name: 'Answerer', type: 'inbound', language_id: english }).expect(201)).body
      .data.id;
  });
  afterAll(() => stack.close());

  function post(path: string, body: object, owner = account) {
    return stack.http.post(`/api/user/${path}`).set(owner.auth).send(body);
  }
  const campaign = async (body: object = {}, owner = account, assistantId = outbound) =>
    (await post('campaign', { name: 'Spring renewals', assistant_id: assistantId, ...body }, owner).expect(201)).body
      .data;
  const lead = async (campaignId: number, phone = '+14155550100', extra: object = {}) =>
    (await post('lead', { phone_number: phone, campaign_id: campaignId, ...extra }).expect(201)).body.data;

  describe('campaigns', () => {
    it('creates a draft with defaults, reads, lists, updates and deletes', async () => {
      const created = await post('campaign', {
        name: 'Renewals',
        assistant_id: outbound,
        status: 'in-progress',
      }).expect(201);
      expect(created.body).toEqual({
        message: 'Campaign created successfully.',
        data: {
          id: expect.any(Number),
          name: 'Renewals',
          assistant_id: outbound,
          status: 'draft',
          timezone: 'UTC',
          phone_number_ids: [],
          max_calls_in_parallel: 3,
          allowed_hours_start_time: null,
          allowed_hours_end_time: null,
          allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
          max_retries: 3,
          retry_interval: 60,
          leads_count: 0,
          created_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
        },
      });
      const id = created.body.data.id;
      const updated = await stack.http
        .put(`/api/user/campaign/${id}`)
        .set(account.auth)
        .send({
          timezone: 'Europe/Berlin',
          allowed_hours_start_time: '09:00',
          allowed_hours_end_time: '17:30',
          allowed_days: ['monday', 'friday'],
        })
        .expect(200);
      expect(updated.body.data).toMatchObject({
        name: 'Renewals',
        timezone: 'Europe/Berlin',
        allowed_hours_start_time: '09:00',
        allowed_days: ['monday', 'friday'],
      });
      const list = await stack.http.get('/api/user/campaigns').set(account.auth).expect(200);
      expect(list.body).toMatchObject({
        current_page: 1,
        per_page: 15,
        data: expect.arrayContaining([expect.objectContaining({ id })]),
      });
      await stack.http
        .delete(`/api/user/campaign/${id}`)
        .set(account.auth)
        .expect(200, { message: 'Campaign deleted successfully.' });
      await stack.http
        .get(`/api/user/campaign/${id}`)
        .set(account.auth)
        .expect(404, { message: 'Campaign not found.' });
    });

    it.each([
      [{ name: '' }, 'name', 'The name field is required.'],
      [{ assistant_id: undefined }, 'assistant_id', 'The assistant id field is required.'],
      [{ assistant_id: 99999999 }, 'assistant_id', 'The selected assistant id is invalid.'],
      [{ timezone: 'Nowhere/City' }, 'timezone', 'The timezone field must be a valid timezone.'],
      [
        { max_calls_in_parallel: 11 },
        'max_calls_in_parallel',
        'The max calls in parallel field must be between 1 and 10.',
      ],
      [
        { allowed_hours_start_time: '25:00' },
        'allowed_hours_start_time',
        'The allowed hours start time field format is invalid.',
      ],
      [{ allowed_days: ['funday'] }, 'allowed_days', 'The selected allowed days is invalid.'],
      [{ max_retries: 6 }, 'max_retries', 'The max retries field must be between 1 and 5.'],
      [{ retry_interval: 5 }, 'retry_interval', 'The retry interval field must be between 10 and 4320.'],
      [{ phone_number_ids: [99999999] }, 'phone_number_ids.0', 'The selected phone number ids.0 is invalid.'],
    ])('validates %j', async (overrides, field, message) => {
      const response = await post('campaign', { name: 'V', assistant_id: outbound, ...overrides });
      expect({ status: response.status, errors: response.body.errors?.[field] }).toEqual({
        status: 422,
        errors: [message],
      });
    });

    it('needs an outbound assistant of the account', async () => {
      const inboundResponse = await post('campaign', { name: 'X', assistant_id: inbound });
      expect(inboundResponse.body.errors).toEqual({
        assistant_id: ['The assistant id field must be an outbound assistant.'],
      });
      const theirs = (
        await post('assistant', { name: 'Theirs', type: 'outbound', language_id: english }, other).expect(201)
      ).body.data.id;
      expect((await post('campaign', { name: 'X', assistant_id: theirs })).body.errors).toEqual({
        assistant_id: ['The selected assistant id is invalid.'],
      });
    });

    it('starts only with leads and an assistant, and stops', async () => {
      const target = await campaign();
      const status = (action: string, id = target.id) => post('campaigns/update-status', { campaign_id: id, action });
      const empty = await status('start');
      expect(empty.status).toBe(422);
      expect(empty.body.errors).toEqual({ campaign_id: ['The campaign has no leads to call.'] });
      await lead(target.id);
      expect((await status('start')).body.errors).toEqual({
        campaign_id: ['The campaign has no phone number to call from.'],
      });
      const trunk = await stack.http
        .post('/api/user/phone-numbers/sip-trunks')
        .set(account.auth)
        .send({
          sip_trunk_type: 'number',
          phone_number: unheldNumber(),
          sip_username: 'acme',
          sip_password: 'a-long-secret',
          sip_address: 'sip.carrier.example.com',
        })
        .expect(201);
      await stack.http
        .put(`/api/user/campaign/${target.id}`)
        .set(account.auth)
        .send({ phone_number_ids: [trunk.body.data.id] })
        .expect(200);
      expect((await status('start').expect(200)).body).toEqual({
        message: 'Campaign started successfully.',
        success: true,
        data: { campaign_id: target.id, status: 'in-progress' },
      });
      expect((await status('stop').expect(200)).body.data.status).toBe('stopped');
      expect((await status('stop')).status).toBe(422);
      await status('start', 99999999).expect(404, { message: 'Campaign not found.' });

      const orphan = await campaign(
        {},
        account,
        (await post('assistant', { name: 'Gone', type: 'outbound', language_id: english }).expect(201)).body.data.id,
      );
      await lead(orphan.id);
      await stack.http.delete(`/api/user/assistant/${orphan.assistant_id}`).set(account.auth).expect(200);
      expect((await status('start', orphan.id)).body.errors).toEqual({
        campaign_id: ['The campaign has no assistant: its assistant was deleted.'],
      });
    });
  });

  describe('leads', () => {
    it('creates a lead in E.164 with its campaign and secondary contacts, timestamps in Laravel format', async () => {
      const target = await campaign({ name: 'Leads A' });
      const created = await post('lead', {
        phone_number: '+1 (415) 555-0101',
        campaign_id: target.id,
        variables: { first_name: 'Ada', score: 9 },
        secondary_contacts: [{ phone_number: '+44 20 7946 0018', variables: { relation: 'office' } }],
      }).expect(201);
      expect(created.body).toEqual({
        message: 'Lead created successfully.',
        data: {
          id: expect.any(Number),
          campaign_id: target.id,
          phone_number: '+14155550101',
          variables: { first_name: 'Ada', score: 9 },
          status: 'created',
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          campaign: { id: target.id, name: 'Leads A' },
          secondary_contacts: [
            {
              id: expect.any(Number),
              phone_number: '+442079460018',
              variables: { relation: 'office' },
              status: 'created',
              created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
              updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
            },
          ],
        },
      });
      // Written in one transaction, the contact and its lead carry the same time, read back in UTC alike.
      const { data } = created.body;
      expect(data.secondary_contacts[0].created_at).toBe(data.created_at);
      const listed = await stack.http.get('/api/user/leads').query({ campaign_id: target.id }).set(account.auth);
      expect(listed.body.data).toEqual([data]);
    });

    it('refuses the same number twice in a campaign, unless allowed (either spelling)', async () => {
      const target = await campaign({ name: 'Dupes' });
      await lead(target.id, '+14155550102');
      const duplicate = await post('lead', { phone_number: '+14155550102', campaign_id: target.id });
      expect(duplicate.status).toBe(422);
      expect(duplicate.body.errors).toEqual({ phone_number: ['The phone number has already been taken.'] });
      await post('lead', { phone_number: '+14155550102', campaign_id: target.id, allow_duplicate: true }).expect(201);
      await post('lead', { phone_number: '+14155550102', campaign_id: target.id, allow_dupplicate: true }).expect(201);
    });

    it.each([
      [{ phone_number: '12345' }, 'phone_number', 'The phone number field must be a valid phone number.'],
      [{ campaign_id: 99999999 }, 'campaign_id', 'The selected campaign id is invalid.'],
      [
        { variables: ['a'] },
        'variables',
        'The variables field must be an object of at most 100 text, number or boolean values.',
      ],
      [
        { secondary_contacts: [{ phone_number: 'nope' }] },
        'secondary_contacts.0.phone_number',
        'The secondary contacts.0.phone number field must be a valid phone number.',
      ],
    ])('validates %j', async (overrides, field, message) => {
      const target = await campaign({ name: 'Validation' });
      const response = await post('lead', { phone_number: '+14155550103', campaign_id: target.id, ...overrides });
      expect({ status: response.status, errors: response.body.errors?.[field] }).toEqual({
        status: 422,
        errors: [message],
      });
    });

    it('matches a lead by any part of its number, among the account’s own leads only', async () => {
      const fresh = await createAccount(stack);
      const stranger = await createAccount(stack);
      const ownerAssistant = async (owner: TestAccount) =>
        (await post('assistant', { name: 'P', type: 'outbound', language_id: english }, owner).expect(201)).body.data
          .id;
      const mine = (await campaign({}, fresh, await ownerAssistant(fresh))).id;
      const theirs = (await campaign({}, stranger, await ownerAssistant(stranger))).id;
      const numbers = ['+14155550901', '+14155555555', '+442079460123', '+33612345678'];
      const ids = new Map<number, string>();
      for (const number of numbers) {
        const created = await post('lead', { phone_number: number, campaign_id: mine }, fresh).expect(201);
        ids.set(created.body.data.id, number);
        await post('lead', { phone_number: number, campaign_id: theirs }, stranger).expect(201);
      }
      const matching = async (part: string) => {
        const page = (
          await stack.http
            .get('/api/user/leads')
            .query({ phone_number: part, per_page: 100 })
            .set(fresh.auth)
            .expect(200)
        ).body;
        const found = page.data.map((item: { id: number }) => ids.get(item.id) ?? `another account's lead ${item.id}`);
        expect(page.total).toBe(found.length);
        return found.sort();
      };
      // Whatever the part's length, repeats or plus sign: exactly the numbers that contain it, as a substring.
      for (const part of ['+14155550901', '+44', '0901', '555', '5555555', '55555555', '009', '1', '12', '99999']) {
        expect({ part, found: await matching(part) }).toEqual({
          part,
          found: numbers.filter((number) => number.includes(part)).sort(),
        });
      }
      // A `+` sent as it is in the query string is the number's plus, not a space.
      const raw = (await stack.http.get('/api/user/leads?phone_number=+44&per_page=100').set(fresh.auth).expect(200))
        .body;
      expect(raw.data.map((item: { id: number }) => ids.get(item.id))).toEqual(['+442079460123']);
    });

    it('lists with every filter, newest first, in the full envelope', async () => {
      const fresh = await createAccount(stack);
      const assistant = (
        await post('assistant', { name: 'F', type: 'outbound', language_id: english }, fresh).expect(201)
      ).body.data.id;
      const [one, two] = [
        (await post('campaign', { name: 'One', assistant_id: assistant }, fresh).expect(201)).body.data.id,
        (await post('campaign', { name: 'Two', assistant_id: assistant }, fresh).expect(201)).body.data.id,
      ];
      for (let index = 0; index < 5; index++) {
        await post(
          'lead',
          { phone_number: `+1415555${String(1100 + index)}`, campaign_id: index < 3 ? one : two },
          fresh,
        ).expect(201);
      }
      const leadIds = (
        await stack.dataSource.query('SELECT id FROM leads WHERE user_id = $1 ORDER BY id', [fresh.id])
      ).map((row: { id: number }) => row.id);
      await stack.dataSource.query(
        `UPDATE leads SET status = 'blacklisted', created_at = '2026-01-10 12:00:00+00' WHERE id = $1`,
        [leadIds[0]],
      );
      const list = (query: object) => stack.http.get('/api/user/leads').query(query).set(fresh.auth).expect(200);
      const page = (await list({ per_page: 2 })).body;
      expect(page).toMatchObject({ current_page: 1, per_page: 2, total: 5, last_page: 3, from: 1, to: 2 });
      expect(page.data.map((item: { id: number }) => item.id)).toEqual([leadIds[4], leadIds[3]]);
      expect(page.links.map((link: { label: string }) => link.label)).toEqual([
        '&laquo; Previous',
        '1',
        '2',
        '3',
        'Next &raquo;',
      ]);
      expect((await list({ campaign_id: one })).body.total).toBe(3);
      expect((await list({ status: 'blacklisted' })).body.data.map((item: { id: number }) => item.id)).toEqual([
        leadIds[0],
      ]);
      expect((await list({ phone_number: '5551101' })).body.total).toBe(1);
      expect((await list({ date_from: '2026-01-10', date_to: '2026-01-10' })).body.total).toBe(1);
      expect((await list({ date_to: '2026-01-09' })).body.total).toBe(0);
      const theirCampaign = await campaign({ name: 'Not theirs' });
      expect((await list({ campaign_id: theirCampaign.id })).body.total).toBe(0);
      for (const [name, value] of [
        ['status', 'done'],
        ['campaign_id', 'x'],
        ['date_from', '2026-02-30'],
        ['date_to', '10/01/2026'],
        ['phone_number', 'abc'],
      ]) {
        const invalid = await stack.http
          .get('/api/user/leads')
          .query({ [name]: value })
          .set(fresh.auth);
        expect({ name, status: invalid.status, keys: Object.keys(invalid.body.errors ?? {}) }).toEqual({
          name,
          status: 422,
          keys: [name],
        });
      }
    });

    it('keeps exact totals through creates, status changes, imports, deletes and a deleted campaign', async () => {
      const fresh = await createAccount(stack);
      const assistant = (
        await post('assistant', { name: 'T', type: 'outbound', language_id: english }, fresh).expect(201)
      ).body.data.id;
      const first = (await post('campaign', { name: 'First', assistant_id: assistant }, fresh).expect(201)).body.data
        .id;
      const second = (await post('campaign', { name: 'Second', assistant_id: assistant }, fresh).expect(201)).body.data
        .id;
      const ids: number[] = [];
      for (let index = 0; index < 6; index++) {
        ids.push(
          (
            await post(
              'lead',
              { phone_number: `+1415555${1200 + index}`, campaign_id: index % 2 ? first : second },
              fresh,
            ).expect(201)
          ).body.data.id,
        );
      }
      await stack.http.patch(`/api/user/leads/${ids[0]}`).set(fresh.auth).send({ status: 'blacklisted' }).expect(200);
      await stack.http.delete(`/api/user/leads/${ids[1]}`).set(fresh.auth).expect(200);
      const totals = async () => {
        const total = async (query: object) =>
          (await stack.http.get('/api/user/leads').query(query).set(fresh.auth).expect(200)).body.total;
        return {
          all: await total({}),
          first: await total({ campaign_id: first }),
          second: await total({ campaign_id: second }),
          blacklisted: await total({ status: 'blacklisted' }),
          created: await total({ status: 'created' }),
        };
      };
      const counted = async () => {
        const [row] = await stack.dataSource.query(
          `SELECT count(*)::int AS all, count(*) FILTER (WHERE campaign_id = $2)::int AS first,
                  count(*) FILTER (WHERE campaign_id = $3)::int AS second,
                  count(*) FILTER (WHERE status = 'blacklisted')::int AS blacklisted,
                  count(*) FILTER (WHERE status = 'created')::int AS created
             FROM leads WHERE user_id = $1`,
          [fresh.id, first, second],
        );
        return row;
      };
      expect(await totals()).toEqual({ all: 5, first: 2, second: 3, blacklisted: 1, created: 4 });
      expect(await totals()).toEqual(await counted());
      await stack.http.delete(`/api/user/campaign/${second}`).set(fresh.auth).expect(200);
      expect(await totals()).toEqual({ all: 2, first: 2, second: 0, blacklisted: 0, created: 2 });
      expect(await totals()).toEqual(await counted());
    });

    it('updates with PATCH: number, variables, contacts replaced, blacklisted and back; deletes', async () => {
      const target = await campaign({ name: 'Patch' });
      const created = await lead(target.id, '+14155550104', {
        variables: { a: 1 },
        secondary_contacts: [{ phone_number: '+14155550105' }],
      });
      const patch = (body: object) => stack.http.patch(`/api/user/leads/${created.id}`).set(account.auth).send(body);
      const changed = (await patch({ phone_number: '+14155550106', secondary_contacts: [] }).expect(200)).body.data;
      expect(changed).toMatchObject({ phone_number: '+14155550106', variables: { a: 1 }, secondary_contacts: [] });
      expect((await patch({ status: 'blacklisted' }).expect(200)).body.data.status).toBe('blacklisted');
      expect((await patch({ status: 'created' }).expect(200)).body.data.status).toBe('created');
      expect((await patch({ status: 'completed' })).status).toBe(422);
      await stack.http
        .delete(`/api/user/leads/${created.id}`)
        .set(account.auth)
        .expect(200, { message: 'Lead deleted successfully.' });
      await stack.http
        .get(`/api/user/leads/${created.id}`)
        .set(account.auth)
        .expect(404, { message: 'Lead not found.' });
    });

    it('treats another account’s leads and campaigns exactly like missing ones', async () => {
      const theirs = (await post('assistant', { name: 'T', type: 'outbound', language_id: english }, other).expect(201))
        .body.data.id;
      const theirCampaign = (await post('campaign', { name: 'Theirs', assistant_id: theirs }, other).expect(201)).body
        .data.id;
      const theirLead = (
        await post('lead', { phone_number: '+14155550107', campaign_id: theirCampaign }, other).expect(201)
      ).body.data.id;
      await stack.http
        .get(`/api/user/leads/${theirLead}`)
        .set(account.auth)
        .expect(404, { message: 'Lead not found.' });
      await stack.http
        .patch(`/api/user/leads/${theirLead}`)
        .set(account.auth)
        .send({ status: 'blacklisted' })
        .expect(404);
      await stack.http.delete(`/api/user/leads/${theirLead}`).set(account.auth).expect(404);
      await stack.http
        .get(`/api/user/campaign/${theirCampaign}`)
        .set(account.auth)
        .expect(404, { message: 'Campaign not found.' });
      await post('campaigns/update-status', { campaign_id: theirCampaign, action: 'start' }).expect(404);
      expect((await post('lead', { phone_number: '+14155550108', campaign_id: theirCampaign })).body.errors).toEqual({
        campaign_id: ['The selected campaign id is invalid.'],
      });
      expect(
        (await stack.http.get('/api/user/leads').query({ campaign_id: theirCampaign }).set(account.auth)).body.total,
      ).toBe(0);
    });
  });

  describe('CSV import', () => {
    const upload = (campaignId: number, csv: string | Buffer) =>
      stack.http
        .post(`/api/user/campaign/${campaignId}/leads/import`)
        .set(account.auth)
        .attach('file', Buffer.from(csv), 'leads.csv');
    const finished = (campaignId: number, importId: number) =>
      waitFor(async () => {
        const response = await stack.http
          .get(`/api/user/campaign/${campaignId}/leads/imports/${importId}`)
          .set(account.auth)
          .expect(200);
        return ['completed', 'failed'].includes(response.body.data.status) ? response.body.data : undefined;
      }, 30_000);

    it('imports good rows, reports bad ones per row, and offers every error as CSV', async () => {
      const target = await campaign({ name: 'Import A' });
      await lead(target.id, '+14155550150');
      const csv =
        '\uFEFFPhone_Number;first_name;city\n+14155550151;Ada;London\nnot a number;Bob;Paris\n+14155550150;Dup;Rome\n+1 415 555 0152;Cy;"Rome; Italy"\n';
      const started = await upload(target.id, csv).expect(202);
      expect(started.body).toEqual({
        message: 'Lead import started.',
        data: { id: expect.any(Number), status: 'pending' },
      });
      const result = await finished(target.id, started.body.data.id);
      expect(result).toEqual({
        id: started.body.data.id,
        status: 'completed',
        rows_total: 4,
        rows_imported: 2,
        rows_failed: 2,
        errors: [
          { row: 3, column: 'phone_number', message: 'The phone number field must be a valid phone number.' },
          { row: 4, column: 'phone_number', message: 'The phone number has already been taken.' },
        ],
      });
      const leads = (await stack.http.get('/api/user/leads').query({ campaign_id: target.id }).set(account.auth)).body
        .data;
      expect(
        leads.map((item: { phone_number: string; variables: object }) => [item.phone_number, item.variables]),
      ).toEqual([
        ['+14155550152', { first_name: 'Cy', city: 'Rome; Italy' }],
        ['+14155550151', { first_name: 'Ada', city: 'London' }],
        ['+14155550150', {}],
      ]);
      const errorsCsv = await stack.http
        .get(`/api/user/campaign/${target.id}/leads/imports/${started.body.data.id}/errors.csv`)
        .set(account.auth)
        .expect(200);
      expect(errorsCsv.headers['content-type']).toMatch(/^text\/csv/);
      expect(errorsCsv.text).toBe(
        'row,column,message\r\n3,phone_number,The phone number field must be a valid phone number.\r\n4,phone_number,The phone number has already been taken.\r\n',
      );
      // A missing or malformed id is the plain JSON 404 of any missing resource, never the CSV's media type.
      for (const [campaignId, importId, message] of [
        [target.id, 2147483000, 'Lead import not found.'],
        [target.id, 'abc', 'Lead import not found.'],
        [target.id, '1.0', 'Lead import not found.'],
        ['0x1', started.body.data.id, 'Campaign not found.'],
        [99999999, started.body.data.id, 'Lead import not found.'],
      ]) {
        const missing = await stack.http
          .get(`/api/user/campaign/${campaignId}/leads/imports/${importId}/errors.csv`)
          .set(account.auth)
          .expect(404);
        expect(missing.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(missing.body).toEqual({ message });
      }
    }, 45_000);

    it('fails a file without a phone_number column, and needs a file', async () => {
      const target = await campaign({ name: 'Import B' });
      const started = await upload(target.id, 'name,city\nAda,London\n').expect(202);
      const result = await finished(target.id, started.body.data.id);
      expect(result).toMatchObject({
        status: 'failed',
        rows_imported: 0,
        errors: [
          { row: 1, column: 'phone_number', message: 'The file needs a header row with a phone_number column.' },
        ],
      });
      const missing = await stack.http
        .post(`/api/user/campaign/${target.id}/leads/import`)
        .set(account.auth)
        .field('x', '1');
      expect(missing.status).toBe(422);
      expect(missing.body.errors).toEqual({ file: ['The file field is required.'] });
      await stack.http
        .post('/api/user/campaign/99999999/leads/import')
        .set(account.auth)
        .attach('file', Buffer.from('phone_number\n'), 'a.csv')
        .expect(404);
    }, 45_000);

    it('rescues an import whose job was lost, through the sweep', async () => {
      const target = await campaign({ name: 'Import D' });
      const [{ id }] = await stack.dataSource.query(
        `INSERT INTO lead_imports (user_id, campaign_id, file, status, updated_at)
         VALUES ($1, $2, $3, 'pending', now() - interval '1 hour') RETURNING id`,
        [account.id, target.id, Buffer.from('phone_number\n+14155550190\n+14155550191\n')],
      );
      await stack.api.get(JobQueue).enqueue(Jobs.sweepStuckImports, {});
      expect(await finished(target.id, id)).toMatchObject({ status: 'completed', rows_imported: 2 });
    }, 45_000);

    it('resumes an import a worker left half done, without duplicating or losing rows', async () => {
      const target = await campaign({ name: 'Import C' });
      const rows = Array.from({ length: 2500 }, (_, index) => `+1415${String(2000000 + index)}`);
      const csv = `phone_number\n${rows.join('\n')}\n`;
      // What a worker killed after its first batch leaves: 1,000 rows written with the progress that says so.
      const [{ id }] = await stack.dataSource.query(
        `INSERT INTO lead_imports (user_id, campaign_id, file, status, rows_total, rows_done, rows_imported)
         VALUES ($1, $2, $3, 'processing', 2500, 1000, 1000) RETURNING id`,
        [account.id, target.id, Buffer.from(csv)],
      );
      await stack.dataSource.query(
        `INSERT INTO leads (user_id, campaign_id, phone_number) SELECT $1, $2, unnest($3::text[])`,
        [account.id, target.id, rows.slice(0, 1000)],
      );
      await stack.api.get(JobQueue).enqueue(Jobs.importLeads, { importId: id });
      const result = await finished(target.id, id);
      expect(result).toMatchObject({ status: 'completed', rows_total: 2500, rows_imported: 2500, rows_failed: 0 });
      const [{ total, distinct }] = await stack.dataSource.query(
        'SELECT count(*)::int AS total, count(DISTINCT phone_number)::int AS distinct FROM leads WHERE campaign_id = $1',
        [target.id],
      );
      expect({ total, distinct }).toEqual({ total: 2500, distinct: 2500 });
    }, 60_000);
  });
});

describe('Lead import through a worker killed mid-import', () => {
  let stack: Stack;
  let account: TestAccount;
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    account = await createAccount(stack);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await stack.close();
  });

  it(
    'is finished by another worker with every row imported once',
    async () => {
      // Short locks, so the second worker takes over the killed one's job within seconds.
      const fastTakeOver = { JOB_LOCK_MS: '2000', JOB_STALLED_CHECK_MS: '1000', LOG_LEVEL: 'silent' };
      workers.push(await AppProcess.start(fastTakeOver, 'worker'));
      const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
      const assistant = (
        await stack.http
          .post('/api/user/assistant')
          .set(account.auth)
          .send({ name: 'C', type: 'outbound', language_id: languages[0].id })
          .expect(201)
      ).body.data.id;
      const target = (
        await stack.http
          .post('/api/user/campaign')
          .set(account.auth)
          .send({ name: 'Killed', assistant_id: assistant })
          .expect(201)
      ).body.data.id;
      const rows = 40_000;
      const csv = `phone_number,n\n${Array.from({ length: rows }, (_, index) => `+1415${3000000 + index},${index}`).join('\n')}\n`;
      const started = await stack.http
        .post(`/api/user/campaign/${target}/leads/import`)
        .set(account.auth)
        .attach('file', Buffer.from(csv), 'leads.csv')
        .expect(202);
      const importId = started.body.data.id;
      const progress = async () =>
        (await stack.dataSource.query('SELECT status, rows_done FROM lead_imports WHERE id = $1', [importId]))[0];
      await waitFor(async () => ((await progress()).rows_done >= 1000 ? true : undefined), 30_000, 20);
      await workers[0].stop(); // SIGKILL, mid-import
      const killedAt = await progress();
      expect(killedAt.status).toBe('processing');
      expect(killedAt.rows_done).toBeLessThan(rows);

      workers.push(await AppProcess.start(fastTakeOver, 'worker'));
      // 40,000 rows on a second worker that boots first: however long that takes, as long as rows keep being imported
      // (a minute and more on a loaded 2-core machine); a minute without a row fails.
      await waitWhileProgressing(
        async () => ((await progress()).status === 'completed' ? true : undefined),
        async () => (await progress()).rows_done,
        60_000,
      );
      const result = (
        await stack.http.get(`/api/user/campaign/${target}/leads/imports/${importId}`).set(account.auth).expect(200)
      ).body.data;
      expect(result).toMatchObject({ status: 'completed', rows_total: rows, rows_imported: rows, rows_failed: 0 });
      const [{ total, distinct }] = await stack.dataSource.query(
        'SELECT count(*)::int AS total, count(DISTINCT phone_number)::int AS distinct FROM leads WHERE campaign_id = $1',
        [target],
      );
      expect({ total, distinct }).toEqual({ total: rows, distinct: rows });
    },
    UNTIL_STALLED,
  );
});

describe('Lead import whose job was lost', () => {
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    // Its own queue prefix: the sweep's schedule here follows this stack's short lease, not the other suites'.
    stack = await startStack({
      env: { IMPORT_STUCK_AFTER_SECONDS: '2', QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}:import-lease` },
    });
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  it('is taken up by the scheduled sweep within one and a half leases, without anyone asking', async () => {
    const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
    const assistant = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'C', type: 'outbound', language_id: languages[0].id })
        .expect(201)
    ).body.data.id;
    const target = (
      await stack.http
        .post('/api/user/campaign')
        .set(account.auth)
        .send({ name: 'Lost job', assistant_id: assistant })
        .expect(201)
    ).body.data.id;
    // What the API leaves when it dies between writing the import and queueing its job.
    const [{ id }] = await stack.dataSource.query(
      `INSERT INTO lead_imports (user_id, campaign_id, file, status) VALUES ($1, $2, $3, 'pending') RETURNING id`,
      [account.id, target, Buffer.from('phone_number\n+14155550195\n')],
    );
    const lostAt = Date.now();
    const done = await waitFor(async () => {
      const [row] = await stack.dataSource.query('SELECT status FROM lead_imports WHERE id = $1', [id]);
      return row.status === 'completed' ? Date.now() - lostAt : undefined;
    }, 30_000);
    // The lease (2 s), then at most one sweep interval (1 s), then the import itself.
    expect(done).toBeLessThan(10_000);
  }, 45_000);
});
