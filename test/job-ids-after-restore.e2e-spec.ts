import { dropDatabase, ensureDatabase, runMigrations } from '@app/database';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { waitFor, waitForDocument } from './support/wait-for';

/** What a user sees once everything one pass set in motion has settled. */
interface Outcome {
  documents: { id: number; status: string }[];
  trunk: { id: number; provisioned: boolean };
  leadImport: { id: number; status: string; rows_imported: number };
  campaign: string;
  calls: { id: number; status: string; webhook: unknown }[];
  webhooksReceived: number;
}

/**
 * Queue job ids follow row ids (`document-<id>`, `lead-import-<id>`, `webhook-<id>`, `sip-request-<id>`), and
 * finished jobs are kept for a while. A database restored from a backup, or recreated against the same Redis and
 * QUEUE_PREFIX, hands out row ids that finished jobs already name: the new work must run anyway.
 */
describe('Job ids after the database is recreated against the same queues', () => {
  const base = process.env.TEST_DATABASE_URL!;
  const databases = ['before', 'after'].map((suffix) => {
    const url = new URL(base);
    url.pathname = `${url.pathname}_${suffix}`;
    return url.toString();
  });
  let stack: Stack | undefined;
  let receiver: LocalSite;

  beforeAll(async () => {
    receiver = await startLocalSite({
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    });
    for (const url of databases) {
      await ensureDatabase(url);
      await runMigrations(url);
    }
    // Two databases migrated from nothing, each loading the search's related words: a minute or more on a busy machine.
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await receiver.close();
    for (const url of databases) await dropDatabase(url);
  });

  /**
   * In a fresh account of a fresh database (so the same row ids every time): three TXT documents, a SIP trunk, a CSV
   * import of two leads into a campaign whose calls the local dialer's demo mode answers and completes, and the
   * webhook of each ended call.
   */
  async function onePass(databaseUrl: string): Promise<Outcome> {
    stack = await startStack({ env: { DATABASE_URL: databaseUrl, LOCAL_DIALER_DEMO_MS: '50' } });
    const current = stack;
    const account: TestAccount = await createAccount(current);
    const api = {
      get: (path: string) => current.http.get(`/api/user/${path}`).set(account.auth),
      post: (path: string, body: object) => current.http.post(`/api/user/${path}`).set(account.auth).send(body),
    };

    const knowledgebase = (await api.post('knowledgebases', { name: 'Hours' }).expect(201)).body.data.id;
    const documentIds: number[] = [];
    for (const day of ['Monday', 'Tuesday', 'Wednesday']) {
      const created = await current.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .field('name', day)
        .field('type', 'txt')
        .attach('file', Buffer.from(`We are open on ${day}.`), `${day}.txt`)
        .expect(201);
      documentIds.push(created.body.data.id);
    }

    // The API answers a trunk's create only once the worker has provisioned it (or 502 after a timeout).
    const trunk = (await api.post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const language = (await api.get('assistants/languages').expect(200)).body[0].id;
    const assistant = (
      await api
        .post('assistant', {
          name: 'Renewals',
          type: 'outbound',
          language_id: language,
          webhook_url: `${receiver.origin}/hook`,
          is_webhook_active: true,
        })
        .expect(201)
    ).body.data;
    const campaign = (
      await api
        .post('campaign', { name: 'Renewals', assistant_id: assistant.id, phone_number_ids: [trunk.id] })
        .expect(201)
    ).body.data;
    const importId = (
      await current.http
        .post(`/api/user/campaign/${campaign.id}/leads/import`)
        .set(account.auth)
        .attach('file', Buffer.from('phone_number\n+14155550101\n+14155550102\n'), 'leads.csv')
        .expect(202)
    ).body.data.id;
    const leadImport = await waitFor(async () => {
      const data = (await api.get(`campaign/${campaign.id}/leads/imports/${importId}`).expect(200)).body.data;
      return ['completed', 'failed'].includes(data.status) ? data : undefined;
    }, 30_000);
    await api.post('campaigns/update-status', { campaign_id: campaign.id, action: 'start' }).expect(200);

    const documents = [];
    for (const id of documentIds)
      documents.push({ id, status: (await waitForDocument(current, account, knowledgebase, id, 30_000)).status });
    const campaignStatus = await waitFor(async () => {
      const status = (await api.get(`campaign/${campaign.id}`).expect(200)).body.data.status;
      return status === 'completed' ? status : undefined;
    }, 30_000).catch(async () => (await api.get(`campaign/${campaign.id}`)).body.data.status as string);
    const calls = await waitFor(async () => {
      const listed = (await api.get(`calls?campaign_id=${campaign.id}`).expect(200)).body.data as {
        id: number;
        status: string;
        webhook_response: { status?: number };
      }[];
      return listed.length === 2 && listed.every((call) => call.webhook_response?.status) ? listed : undefined;
    }, 30_000).catch(async () => (await api.get(`calls?campaign_id=${campaign.id}`)).body.data);

    const received = receiver.requests.filter((request) => request.path === '/hook').length;
    await current.close();
    stack = undefined;
    return {
      documents,
      trunk: { id: trunk.id, provisioned: Boolean(trunk.inbound_trunk_id && trunk.outbound_trunk_id) },
      leadImport: { id: importId, status: leadImport.status, rows_imported: leadImport.rows_imported },
      campaign: campaignStatus,
      calls: calls
        .map((call: { id: number; status: string; webhook_response: { status?: number } }) => ({
          id: call.id,
          status: call.status,
          webhook: call.webhook_response?.status,
        }))
        .sort((a: { id: number }, b: { id: number }) => a.id - b.id),
      webhooksReceived: received,
    };
  }

  it('runs documents, imports, provisioning, dials and webhooks whose ids finished jobs already name', async () => {
    const first = await onePass(databases[0]);
    expect(first).toEqual({
      documents: [1, 2, 3].map((id) => ({ id, status: 'active' })),
      trunk: { id: expect.any(Number), provisioned: true },
      leadImport: { id: 1, status: 'completed', rows_imported: 2 },
      campaign: 'completed',
      calls: [
        { id: 1, status: 'completed', webhook: 200 },
        { id: 2, status: 'completed', webhook: 200 },
      ],
      webhooksReceived: 2,
    });
    receiver.requests.length = 0;
    // The same rows again, with the same ids, in a database created afresh under the same queues.
    expect(await onePass(databases[1])).toEqual(first);
  }, 180_000);
});
