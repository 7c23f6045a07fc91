import { createAccount, type TestAccount, unheldNumber } from './support/factories';
import { type Stack, startStack, recordQueries } from './support/stack';

describe('Assistants, folders and labels', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let english: number;
  let german: number;
  let french: number;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    account = await createAccount(stack);
    other = await createAccount(stack);
    const languages: { id: number; iso_2: string }[] = (
      await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200)
    ).body;
    const byCode = (code: string) => languages.find((language) => language.iso_2 === code)!.id;
    [english, german, french] = [byCode('en'), byCode('de'), byCode('fr')];
  });
  afterAll(() => stack.close());

  const post = (path: string, body: object, owner = account) =>
    stack.http.post(`/api/user/${path}`).set(owner.auth).send(body);
  const put = (path: string, body: object, owner = account) =>
    stack.http.put(`/api/user/${path}`).set(owner.auth).send(body);
  const folder = async (name: string, owner = account) => (await post('folder', { name }, owner).expect(201)).body.data;
  const label = async (name: string, owner = account) => (await post('label', { name }, owner).expect(201)).body.data;
  const tool = async (name: string, owner = account) =>
    (
      await post('tools', { name, description: 'd', endpoint: 'https://example.com/x', method: 'GET' }, owner).expect(
        201,
      )
    ).body.data;
  const knowledgebase = async (name: string, owner = account) =>
    (await post('knowledgebases', { name }, owner).expect(201)).body.data;
  const assistant = async (body: object = {}, owner = account) =>
    (
      await post('assistant', { name: 'Receptionist', type: 'inbound', language_id: english, ...body }, owner).expect(
        201,
      )
    ).body.data;
  const read = async (id: number) =>
    (await stack.http.get(`/api/user/assistant/${id}`).set(account.auth).expect(200)).body.data;

  describe('folders and labels', () => {
    it.each(['folder', 'label'])('creates, lists newest first, updates and deletes a %s', async (kind) => {
      const plural = `${kind}s`;
      const noun = kind === 'folder' ? 'Folder' : 'Label';
      const created = await post(kind, { name: `First ${kind}`, color: 'teal', id: 77 }).expect(201);
      expect(created.body).toEqual({
        message: `${noun} created successfully.`,
        data: { id: expect.any(Number), name: `First ${kind}`, color: 'teal', assistants_count: 0 },
      });
      const second = (await post(kind, { name: `Second ${kind}` }).expect(201)).body.data;
      expect(second.color).toBeNull();
      const list = await stack.http.get(`/api/user/${plural}`).query({ per_page: 1 }).set(account.auth).expect(200);
      expect(list.body).toEqual({ data: [{ ...second }], current_page: 1, per_page: 1, total: 2 });
      const updated = await put(`${kind}/${created.body.data.id}`, { color: null }).expect(200);
      expect(updated.body).toEqual({
        message: `${noun} updated successfully.`,
        data: { ...created.body.data, color: null },
      });
      await stack.http
        .delete(`/api/user/${kind}/${second.id}`)
        .set(account.auth)
        .expect(200, { message: `${noun} deleted successfully.` });
      await stack.http
        .delete(`/api/user/${kind}/${second.id}`)
        .set(account.auth)
        .expect(404, { message: `${noun} not found.` });
      await put(`${kind}/${second.id}`, { name: 'x' }).expect(404, { message: `${noun} not found.` });
    });

    it.each(['folder', 'label'])('keeps %s names unique per account regardless of letter case', async (kind) => {
      await post(kind, { name: 'Sales Team' }).expect(201);
      const duplicate = await post(kind, { name: 'sales team' });
      expect(duplicate.status).toBe(422);
      expect(duplicate.body).toEqual({
        message: 'The name has already been taken.',
        errors: { name: ['The name has already been taken.'] },
      });
      const mine = (await post(kind, { name: 'Support Team' }).expect(201)).body.data;
      await put(`${kind}/${mine.id}`, { name: 'SALES TEAM' }).expect(422);
      await put(`${kind}/${mine.id}`, { name: 'support team' }).expect(200);
      await post(kind, { name: 'Sales Team' }, other).expect(201);
    });

    it.each([
      [{}, 'name', 'The name field is required.'],
      [{ name: 'n'.repeat(256) }, 'name', 'The name field must not be greater than 255 characters.'],
      [{ name: 'Ok', color: 'magenta' }, 'color', 'The selected color is invalid.'],
    ])('validates %j', async (body, field, message) => {
      for (const kind of ['folder', 'label']) {
        const response = await post(kind, body);
        expect({ status: response.status, errors: response.body.errors }).toEqual({
          status: 422,
          errors: { [field]: [message] },
        });
      }
    });

    it('refuses page sizes out of range', async () => {
      await stack.http.get('/api/user/folders').query({ per_page: 101 }).set(account.auth).expect(422);
      await stack.http.get('/api/user/labels').query({ per_page: 0 }).set(account.auth).expect(422);
    });
  });

  describe('assistants', () => {
    it('creates with defaults and returns every field with its links', async () => {
      const [sales, vip, kb, lookup] = [
        await folder('Assistants A'),
        await label('VIP'),
        await knowledgebase('FAQ'),
        await tool('lookup_a'),
      ];
      const created = await post('assistant', {
        name: 'Front desk',
        type: 'inbound',
        language_id: english,
        secondary_language_ids: [german, french],
        folder_id: sales.id,
        label_ids: [vip.id],
        tool_ids: [lookup.id],
        knowledgebase_id: kb.id,
        initial_message: 'Hello!',
        variables: { company: 'Acme', priority: 2, vip: true },
        post_call_schema: [{ name: 'callback', type: 'boolean', description: 'Wants a call back' }],
        user_id: 999,
      }).expect(201);
      expect(created.body.message).toBe('Assistant created successfully.');
      expect(created.body.data).toEqual({
        id: expect.any(Number),
        name: 'Front desk',
        type: 'inbound',
        language_id: english,
        secondary_language_ids: [german, french],
        voice_id: null,
        model: null,
        transcriber: null,
        voice: null,
        timezone: 'UTC',
        initial_message: 'Hello!',
        system_prompt: null,
        knowledgebase_id: kb.id,
        phone_number_id: null,
        tool_ids: [lookup.id],
        tools: [{ id: lookup.id, name: 'lookup_a' }],
        folder_id: sales.id,
        folder: { id: sales.id, name: 'Assistants A', color: null },
        label_ids: [vip.id],
        labels: [{ id: vip.id, name: 'VIP', color: null }],
        webhook_url: null,
        is_webhook_active: false,
        webhook_secret: null,
        variables: { company: 'Acme', priority: 2, vip: true },
        post_call_schema: [{ name: 'callback', type: 'boolean', description: 'Wants a call back' }],
        analysis: {
          summary: { enabled: true, prompt: null },
          structured_data: { enabled: true },
          success: { enabled: true, rubric: 'pass_fail', criteria: null },
        },
        transfer_destinations: [],
        end_call: { enabled: true, message: null },
        voicemail: { action: 'hangup', message: null },
        max_duration: 600,
        record: false,
        status: 'active',
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const kbRead = await stack.http.get(`/api/user/knowledgebases/${kb.id}`).set(account.auth).expect(200);
      expect(kbRead.body.data.assistants_count).toBe(1);
    });

    it.each([
      [{ name: undefined }, 'name', 'The name field is required.'],
      [{ type: 'hybrid' }, 'type', 'The selected type is invalid.'],
      [{ language_id: undefined }, 'language_id', 'The language id field is required.'],
      [{ language_id: 999999 }, 'language_id', 'The selected language id is invalid.'],
      [{ timezone: 'Mars/Olympus' }, 'timezone', 'The timezone field must be a valid timezone.'],
      [
        { initial_message: 'x'.repeat(201) },
        'initial_message',
        'The initial message field must not be greater than 200 characters.',
      ],
      [{ max_duration: 5 }, 'max_duration', 'The max duration field must be between 10 and 7200.'],
      [{ status: 'paused' }, 'status', 'The selected status is invalid.'],
      [{ webhook_url: 'not a url' }, 'webhook_url', 'The webhook url field must be a valid URL.'],
      [
        { variables: { nested: { no: 1 } } },
        'variables',
        'The variables field must be an object of at most 100 text, number or boolean values.',
      ],
      [
        { secondary_language_ids: ['x'] },
        'secondary_language_ids',
        'The secondary language ids field must be an integer.',
      ],
      [{ model: { provider: 'anthropic' } }, 'model.provider', 'The selected model.provider is invalid.'],
      [{ model: { model: 'gpt-4.1' } }, 'model.provider', 'The model.provider field is required.'],
      [
        { model: { provider: 'openai', temperature: 2.5 } },
        'model.temperature',
        'The model.temperature field must be between 0 and 2.',
      ],
      [
        { model: { provider: 'openai', temperature: '0.5' } },
        'model.temperature',
        'The model.temperature field must be a number.',
      ],
      [{ transcriber: { provider: 'whisper' } }, 'transcriber.provider', 'The selected transcriber.provider is invalid.'],
      [
        { transcriber: { provider: 'deepgram', language: 'english please' } },
        'transcriber.language',
        'The transcriber.language field format is invalid.',
      ],
      [{ voice: { provider: 'elevenlabs' } }, 'voice.provider', 'The selected voice.provider is invalid.'],
      [
        { voice: { provider: 'openai', speed: 0.1 } },
        'voice.speed',
        'The voice.speed field must be between 0.25 and 4.',
      ],
      [{ voice: 'alloy' }, 'voice', 'The voice field must be an object.'],
      [
        { voice_id: 'alloy', voice: { provider: 'openai', voice_id: 'echo' } },
        'voice_id',
        'The voice id field must match voice.voice_id.',
      ],
    ])('validates %j', async (overrides, field, message) => {
      const response = await post('assistant', { name: 'V', type: 'outbound', language_id: english, ...overrides });
      expect({ status: response.status, errors: response.body.errors?.[field] }).toEqual({
        status: 422,
        errors: [message],
      });
    });

    it('keeps each assistant’s model, transcriber and voice, voice.voice_id being voice_id', async () => {
      const created = await assistant({
        voice_id: 'alloy',
        model: { provider: 'openai', model: 'gpt-4.1', temperature: 0.3 },
        transcriber: { provider: 'deepgram', language: 'en-US' },
      });
      expect(created).toMatchObject({
        voice_id: 'alloy',
        model: { provider: 'openai', model: 'gpt-4.1', temperature: 0.3 },
        transcriber: { provider: 'deepgram', model: null, language: 'en-US' },
        voice: null,
      });
      const voiced = (await put(`assistant/${created.id}`, { voice: { provider: 'livekit', speed: 1.2 } }).expect(200))
        .body.data;
      expect(voiced).toMatchObject({ voice_id: 'alloy', voice: { provider: 'livekit', voice_id: 'alloy', speed: 1.2 } });
      await put(`assistant/${created.id}`, { voice: { provider: 'openai', voice_id: 'echo' } }).expect(200);
      expect(await read(created.id)).toMatchObject({
        voice_id: 'echo',
        voice: { provider: 'openai', voice_id: 'echo', speed: null },
        model: { provider: 'openai', model: 'gpt-4.1', temperature: 0.3 },
      });
      await put(`assistant/${created.id}`, { voice_id: 'nova' }).expect(200);
      expect((await read(created.id)).voice).toEqual({ provider: 'openai', voice_id: 'nova', speed: null });
      await put(`assistant/${created.id}`, { model: null, transcriber: null, voice: null }).expect(200);
      expect(await read(created.id)).toMatchObject({ voice_id: 'nova', model: null, transcriber: null, voice: null });
    });

    it('refuses references that are missing or another account’s, naming each, and changes nothing', async () => {
      const [theirFolder, theirLabel, theirTool, theirKb] = [
        await folder('Theirs', other),
        await label('Theirs', other),
        await tool('their_tool', other),
        await knowledgebase('Theirs', other),
      ];
      const mine = await label('Mine');
      const target = await assistant({ name: 'Unchanged' });
      const body = {
        folder_id: theirFolder.id,
        label_ids: [mine.id, theirLabel.id, 99999999],
        tool_ids: [theirTool.id],
        knowledgebase_id: theirKb.id,
        phone_number_id: 99999999,
        secondary_language_ids: [german, 99999999],
      };
      for (const response of [
        await post('assistant', { name: 'X', type: 'inbound', language_id: english, ...body }),
        await put(`assistant/${target.id}`, body),
      ]) {
        expect(response.status).toBe(422);
        expect(response.body.errors).toEqual({
          folder_id: ['The selected folder id is invalid.'],
          'label_ids.1': ['The selected label ids.1 is invalid.'],
          'label_ids.2': ['The selected label ids.2 is invalid.'],
          'tool_ids.0': ['The selected tool ids.0 is invalid.'],
          knowledgebase_id: ['The selected knowledgebase id is invalid.'],
          phone_number_id: ['The selected phone number id is invalid.'],
          'secondary_language_ids.1': ['The selected secondary language ids.1 is invalid.'],
        });
      }
      expect(await read(target.id)).toEqual(target);
    });

    it('replaces lists sent, clears them with [], keeps them when omitted', async () => {
      const [a, b, c] = [await label('L-a'), await label('L-b'), await label('L-c')];
      const [t1, t2] = [await tool('tool_one'), await tool('tool_two')];
      const created = await assistant({ label_ids: [a.id, b.id], tool_ids: [t1.id], secondary_language_ids: [german] });
      const replaced = (
        await put(`assistant/${created.id}`, { label_ids: [c.id], tool_ids: [t2.id, t1.id] }).expect(200)
      ).body.data;
      expect(replaced).toMatchObject({ label_ids: [c.id], tool_ids: [t1.id, t2.id], secondary_language_ids: [german] });
      const kept = (await put(`assistant/${created.id}`, { name: 'Renamed' }).expect(200)).body.data;
      expect(kept).toMatchObject({ name: 'Renamed', label_ids: [c.id], tool_ids: [t1.id, t2.id] });
      const cleared = (
        await put(`assistant/${created.id}`, {
          label_ids: [],
          tool_ids: [],
          secondary_language_ids: [],
          folder_id: null,
        }).expect(200)
      ).body.data;
      expect(cleared).toMatchObject({
        label_ids: [],
        labels: [],
        tool_ids: [],
        tools: [],
        secondary_language_ids: [],
        folder_id: null,
        folder: null,
      });
    });

    it('keeps counts right through links, unlinks and deletes', async () => {
      const [box, tag, kb, helper] = [
        await folder('Counted'),
        await label('Counted'),
        await knowledgebase('Counted'),
        await tool('counted_tool'),
      ];
      const one = await assistant({
        folder_id: box.id,
        label_ids: [tag.id],
        knowledgebase_id: kb.id,
        tool_ids: [helper.id],
      });
      const two = await assistant({ folder_id: box.id, label_ids: [tag.id], knowledgebase_id: kb.id });
      const count = async (kind: 'folders' | 'labels', id: number) =>
        (
          await stack.http.get(`/api/user/${kind}`).query({ per_page: 100 }).set(account.auth).expect(200)
        ).body.data.find((item: { id: number }) => item.id === id).assistants_count;
      const kbCount = async () =>
        (await stack.http.get(`/api/user/knowledgebases/${kb.id}`).set(account.auth)).body.data.assistants_count;
      expect([await count('folders', box.id), await count('labels', tag.id), await kbCount()]).toEqual([2, 2, 2]);
      await put(`assistant/${two.id}`, { folder_id: null, label_ids: [], knowledgebase_id: null }).expect(200);
      expect([await count('folders', box.id), await count('labels', tag.id), await kbCount()]).toEqual([1, 1, 1]);
      await stack.http
        .delete(`/api/user/assistant/${one.id}`)
        .set(account.auth)
        .expect(200, { message: 'Assistant deleted successfully.' });
      expect([await count('folders', box.id), await count('labels', tag.id), await kbCount()]).toEqual([0, 0, 0]);
      await stack.http
        .get(`/api/user/assistant/${one.id}`)
        .set(account.auth)
        .expect(404, { message: 'Assistant not found.' });
    });

    it('unfiles, unlabels and detaches when a folder, label, tool or knowledgebase goes', async () => {
      const [box, tag, kb, helper] = [
        await folder('Goes'),
        await label('Goes'),
        await knowledgebase('Goes'),
        await tool('goes_tool'),
      ];
      const linked = await assistant({
        folder_id: box.id,
        label_ids: [tag.id],
        knowledgebase_id: kb.id,
        tool_ids: [helper.id],
      });
      await stack.http.delete(`/api/user/folder/${box.id}`).set(account.auth).expect(200);
      await stack.http.delete(`/api/user/label/${tag.id}`).set(account.auth).expect(200);
      await stack.http.delete(`/api/user/knowledgebases/${kb.id}`).set(account.auth).expect(200);
      await stack.http.delete(`/api/user/tools/${helper.id}`).set(account.auth).expect(200);
      expect(await read(linked.id)).toMatchObject({
        folder_id: null,
        folder: null,
        label_ids: [],
        knowledgebase_id: null,
        tool_ids: [],
      });
    });

    it('unassigns a phone number that is released', async () => {
      const [number] = await stack.dataSource.query(
        `INSERT INTO phone_numbers (user_id, phone_number, country_code, type, sms_capable, region)
         VALUES ($1, $2, 'US', 'normal', true, 'CA') RETURNING id`,
        [account.id, unheldNumber()],
      );
      const linked = await assistant({ phone_number_id: number.id });
      expect(linked.phone_number_id).toBe(number.id);
      await stack.http.delete(`/api/user/phone-numbers/${number.id}`).set(account.auth).expect(200);
      expect((await read(linked.id)).phone_number_id).toBeNull();
    });

    it('lists with the full envelope, 10 a page by default, newest first, with filters', async () => {
      const fresh = await createAccount(stack);
      const [box, tag] = [await folder('Filter box', fresh), await label('Filter tag', fresh)];
      for (let index = 0; index < 12; index++) {
        await assistant(
          {
            name: index % 2 ? `Sales agent ${index}` : `Support ${index}`,
            ...(index < 3 ? { folder_id: box.id } : {}),
            ...(index % 4 === 0 ? { label_ids: [tag.id] } : {}),
          },
          fresh,
        );
      }
      const page = await stack.http.get('/api/user/assistants/get').set(fresh.auth).expect(200);
      expect(page.body).toMatchObject({ current_page: 1, per_page: 10, total: 12, last_page: 2, from: 1, to: 10 });
      expect(page.body.data[0].name).toBe('Sales agent 11');
      const list = (query: object) =>
        stack.http.get('/api/user/assistants/get').query(query).set(fresh.auth).expect(200);
      expect((await list({ folder_id: box.id })).body.total).toBe(3);
      expect((await list({ label_id: tag.id })).body.data.map((item: { name: string }) => item.name)).toEqual([
        'Support 8',
        'Support 4',
        'Support 0',
      ]);
      expect((await list({ search: 'SALES' })).body.total).toBe(6);
      expect((await list({ search: '%' })).body.total).toBe(0);
      const theirs = await folder('Not yours');
      expect((await list({ folder_id: theirs.id })).body.total).toBe(0);
      const invalid = await stack.http.get('/api/user/assistants/get').query({ folder_id: 'abc' }).set(fresh.auth);
      expect(invalid.status).toBe(422);
      expect(Object.keys(invalid.body.errors)).toEqual(['folder_id']);
    });

    it('reads a page with the same number of queries for 15 assistants as for 100', async () => {
      const fresh = await createAccount(stack);
      const tag = await label('Everywhere', fresh);
      const helper = await tool('everywhere_tool', fresh);
      for (let index = 0; index < 100; index++) {
        await assistant(
          { name: `A${index}`, label_ids: [tag.id], tool_ids: [helper.id], secondary_language_ids: [german] },
          fresh,
        );
      }
      const queriesFor = async (perPage: number) => {
        const queries = recordQueries(stack.dataSource);
        try {
          const response = await stack.http
            .get('/api/user/assistants/get')
            .query({ per_page: perPage })
            .set(fresh.auth)
            .expect(200);
          expect(response.body.data).toHaveLength(perPage);
          expect(response.body.data[perPage - 1].labels).toEqual([{ id: tag.id, name: 'Everywhere', color: null }]);
          return queries.statements().length;
        } finally {
          queries.restore();
        }
      };
      expect(await queriesFor(100)).toBe(await queriesFor(15));
    }, 60_000);

    it('gives an assistant a webhook signing secret when its URL is first set, and rotates it', async () => {
      const created = await assistant();
      expect(created.webhook_secret).toBeNull();
      const withUrl = (
        await put(`assistant/${created.id}`, {
          webhook_url: 'https://hooks.example.com/calls',
          is_webhook_active: true,
        }).expect(200)
      ).body.data;
      expect(withUrl.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const again = (await put(`assistant/${created.id}`, { webhook_url: 'https://hooks.example.com/v2' }).expect(200))
        .body.data;
      expect(again.webhook_secret).toBe(withUrl.webhook_secret);
      const rotated = await post(`assistant/${created.id}/webhook-secret`, {}).expect(200);
      expect(rotated.body.message).toBe('Webhook secret rotated successfully.');
      expect(rotated.body.data.webhook_secret).toMatch(/^whsec_/);
      expect(rotated.body.data.webhook_secret).not.toBe(withUrl.webhook_secret);
      const [row] = await stack.dataSource.query('SELECT webhook_secret_sealed FROM assistants WHERE id = $1', [
        created.id,
      ]);
      expect(row.webhook_secret_sealed).not.toContain(rotated.body.data.webhook_secret.slice(6, 20));
    });

    it('treats another account’s assistant exactly like a missing one', async () => {
      const theirs = await assistant({}, other);
      const missing = { message: 'Assistant not found.' };
      await stack.http.get(`/api/user/assistant/${theirs.id}`).set(account.auth).expect(404, missing);
      await put(`assistant/${theirs.id}`, { name: 'Mine' }).expect(404, missing);
      await post(`assistant/${theirs.id}/webhook-secret`, {}).expect(404, missing);
      await stack.http.delete(`/api/user/assistant/${theirs.id}`).set(account.auth).expect(404, missing);
      const list = await stack.http
        .get('/api/user/assistants/get')
        .query({ per_page: 100 })
        .set(account.auth)
        .expect(200);
      expect(list.body.data.map((item: { id: number }) => item.id)).not.toContain(theirs.id);
      const theirFolder = await folder('Private', other);
      await put(`folder/${theirFolder.id}`, { name: 'Taken' }).expect(404, { message: 'Folder not found.' });
      await stack.http
        .delete(`/api/user/folder/${theirFolder.id}`)
        .set(account.auth)
        .expect(404, { message: 'Folder not found.' });
    });
  });
});
