import type { Client } from 'pg';
import { sipTrunkRequest, unheldNumber } from './factories';
import { waitFor } from './wait-for';

/**
 * Every create of the user API that takes an Idempotency-Key, killed after its commit and before its answer was kept,
 * then retried with the same key: shared by the e2e test and the fault run (`bench/faults/api-crashes.ts`).
 *
 * The moment is held open from outside the API: a trigger makes the statement that keeps a key's answer wait on an
 * advisory lock the run holds, and that statement only ever runs after the create's own commit. The API process is
 * then SIGKILLed, and its statements still waiting are terminated as its lost connections would be.
 */

/** The advisory lock the answers of the crash keys wait on while the run holds it. */
const ANSWER_LOCK = 720_431;
/** Keys of crash runs start with this; the trigger holds no other key's answer. */
const KEY_PREFIX = 'crash-';

/** An API process as the run sees it: where it listens, and how to kill it. */
export interface CrashableApi {
  baseUrl: string;
  /** Ends the process with SIGKILL. */
  stop(): Promise<void>;
}

export interface CrashAccount {
  id: number;
  auth: { Authorization: string };
}

type Query = (sql: string, parameters?: unknown[]) => Promise<Record<string, any>[]>;

export interface CrashCreate {
  kind: string;
  path: string;
  /** A JSON body, or multipart fields with one file. */
  json?: Record<string, unknown>;
  form?: { fields: Record<string, string>; file: { name: string; content: string } };
  status: number;
  /** The id a create's answer gives its resource. */
  idOf: (body: Record<string, any>) => number;
  /** The ids of the resources this create's request describes, as the database holds them. */
  made: () => Promise<number[]>;
}

/** What a retry answered that the first attempt would not have. */
export interface WrongAnswer {
  kind: string;
  problem: string;
}

async function call(api: CrashableApi, account: CrashAccount, path: string, body: object): Promise<any> {
  const response = await fetch(`${api.baseUrl}/user/${path}`, {
    method: 'POST',
    headers: { ...account.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** The account's creates, one of each kind, on resources made for them first (`tag`, a word, keeps rounds apart). */
export async function crashCreates(
  api: CrashableApi,
  account: CrashAccount,
  query: Query,
  tag: string,
): Promise<CrashCreate[]> {
  const [{ id: languageId }] = await query(`SELECT id FROM languages ORDER BY id LIMIT 1`);
  const trunk = (await call(api, account, 'phone-numbers/sip-trunks', sipTrunkRequest())).data.id;
  const caller = (
    await call(api, account, 'assistant', {
      name: `Caller ${tag}`,
      type: 'outbound',
      language_id: languageId,
      phone_number_id: trunk,
    })
  ).data.id;
  const campaign = (await call(api, account, 'campaign', { name: `Campaign ${tag}`, assistant_id: caller })).data.id;
  const knowledgebase = (await call(api, account, 'knowledgebases', { name: `Knowledgebase ${tag}` })).data.id;
  const [trunkNumber, leadNumber, callee] = [unheldNumber(), unheldNumber(), unheldNumber()];
  const ids = async (sql: string, parameters: unknown[]) => (await query(sql, parameters)).map((row) => Number(row.id));
  const named = (table: string, name: string) => () =>
    ids(`SELECT id FROM ${table} WHERE user_id = $1 AND name = $2`, [account.id, name]);
  const data = (body: Record<string, any>) => body.data.id as number;
  /** A create of a resource known by its name. */
  const byName = (kind: string, path: string, table: string, name: string, json: Record<string, unknown> = {}) => ({
    kind,
    path,
    json: { name, ...json },
    status: 201,
    idOf: kind === 'api-key' ? (body: Record<string, any>) => body.api_key.id as number : data,
    made: named(table, name),
  });
  return [
    byName('api-key', 'api-keys', 'api_keys', `key ${tag}`),
    byName('knowledgebase', 'knowledgebases', 'knowledgebases', `kb ${tag}`),
    {
      kind: 'document',
      path: `knowledgebases/${knowledgebase}/documents`,
      form: { fields: { name: `notes ${tag}`, type: 'txt' }, file: { name: 'notes.txt', content: 'Opening hours.' } },
      status: 201,
      idOf: data,
      made: named('documents', `notes ${tag}`),
    },
    byName('tool', 'tools', 'tools', `tool_${tag}`, {
      description: 'Looks an order up',
      endpoint: 'https://api.example.com/orders/{order_id}',
      method: 'GET',
      headers: [{ name: 'X-Api-Key', value: 'tool-secret' }],
    }),
    byName('assistant', 'assistant', 'assistants', `assistant ${tag}`, { type: 'inbound', language_id: languageId }),
    byName('folder', 'folder', 'folders', `folder ${tag}`),
    byName('label', 'label', 'labels', `label ${tag}`),
    byName('campaign', 'campaign', 'campaigns', `campaign ${tag}`, { assistant_id: caller }),
    {
      kind: 'lead',
      path: 'lead',
      json: { campaign_id: campaign, phone_number: leadNumber },
      status: 201,
      idOf: data,
      made: () =>
        ids(`SELECT id FROM leads WHERE user_id = $1 AND campaign_id = $2 AND phone_number = $3`, [
          account.id,
          campaign,
          leadNumber,
        ]),
    },
    {
      kind: 'lead-import',
      path: `campaign/${campaign}/leads/import`,
      form: { fields: {}, file: { name: 'leads.csv', content: `phone_number\n${unheldNumber()}\n` } },
      status: 202,
      idOf: data,
      made: () => ids(`SELECT id FROM lead_imports WHERE user_id = $1 AND campaign_id = $2`, [account.id, campaign]),
    },
    {
      kind: 'sip-trunk',
      path: 'phone-numbers/sip-trunks',
      json: sipTrunkRequest({ phone_number: trunkNumber }),
      status: 201,
      idOf: data,
      made: () => ids(`SELECT id FROM phone_numbers WHERE phone_number = $1`, [trunkNumber]),
    },
    {
      kind: 'call',
      path: 'make_call',
      json: { assistant_id: caller, phone_number: callee },
      status: 201,
      idOf: (body) => body.call_id,
      made: () => ids(`SELECT id FROM calls WHERE user_id = $1 AND client_phone_number = $2`, [account.id, callee]),
    },
    {
      kind: 'web-call',
      path: `assistant/${caller}/web-call`,
      json: { variables: { round: tag } },
      status: 201,
      idOf: (body) => body.data.call.id,
      made: () =>
        ids(`SELECT id FROM calls WHERE user_id = $1 AND type = 'web' AND variables->>'round' = $2`, [account.id, tag]),
    },
  ];
}

/** Sends a create with its Idempotency-Key, as a client that retries it would each time. */
export function sendCreate(api: CrashableApi, account: CrashAccount, create: CrashCreate): Promise<Response> {
  let body: string | FormData;
  const headers: Record<string, string> = { ...account.auth, 'Idempotency-Key': `${KEY_PREFIX}${create.kind}` };
  if (create.form) {
    body = new FormData();
    for (const [name, value] of Object.entries(create.form.fields)) body.append(name, value);
    body.append('file', new Blob([create.form.file.content]), create.form.file.name);
  } else {
    body = JSON.stringify(create.json);
    headers['content-type'] = 'application/json';
  }
  return fetch(`${api.baseUrl}/user/${create.path}`, { method: 'POST', headers, body });
}

/** Makes the statement that keeps a crash key's answer wait while `database` holds the answer lock. */
export async function holdCrashAnswers(database: Client): Promise<void> {
  await database.query(`
    CREATE OR REPLACE FUNCTION hold_crash_answers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock(${ANSWER_LOCK}); RETURN NEW; END $$`);
  await database.query(`
    CREATE OR REPLACE TRIGGER hold_crash_answers BEFORE UPDATE ON idempotency_keys FOR EACH ROW
    WHEN (NEW.response_status IS NOT NULL AND NEW.key LIKE '${KEY_PREFIX}%') EXECUTE FUNCTION hold_crash_answers()`);
}

export async function releaseCrashAnswers(database: Client): Promise<void> {
  await database.query(`DROP TRIGGER IF EXISTS hold_crash_answers ON idempotency_keys`);
  await database.query(`DROP FUNCTION IF EXISTS hold_crash_answers()`);
}

/** The backends of the database waiting on the answer lock: one per create whose answer is being kept. */
async function waitingAnswers(database: Client): Promise<number[]> {
  const { rows } = await database.query(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
  );
  return rows.map((row: { pid: number }) => row.pid);
}

/**
 * Sends the creates to `api` and kills it once each has committed and is keeping its answer; answers what the
 * attempts got (a dead process answers nothing). No more at once than the process's database pool (10
 * connections), which the held answers occupy.
 */
export async function crashDuring(
  database: Client,
  api: CrashableApi,
  account: CrashAccount,
  batch: CrashCreate[],
): Promise<string[]> {
  await database.query(`SELECT pg_advisory_lock(${ANSWER_LOCK})`);
  try {
    const early: string[] = [];
    const attempts = batch.map((create) =>
      sendCreate(api, account, create).then(
        async (response) => {
          const answer = `${create.kind} answered ${response.status}`;
          early.push(`${answer}: ${(await response.text()).slice(0, 300)}`);
          return answer;
        },
        () => 'no answer',
      ),
    );
    await waitFor(
      async () => ((await waitingAnswers(database)).length === batch.length ? true : undefined),
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; answered before the kill: ${early.join('; ') || 'none'}`);
    });
    await api.stop();
    const answered = await Promise.all(attempts);
    // What the dead process had in flight is lost with it, as its own connections would be.
    for (const pid of await waitingAnswers(database)) await database.query(`SELECT pg_terminate_backend($1)`, [pid]);
    return answered;
  } finally {
    await database.query(`SELECT pg_advisory_unlock(${ANSWER_LOCK})`);
  }
}

/** Retries each create on `api` and says what its answer got wrong: another status, not a replay, or another resource. */
export async function retryCreates(
  api: CrashableApi,
  account: CrashAccount,
  creates: CrashCreate[],
): Promise<{ answers: Map<string, Record<string, any>>; wrong: WrongAnswer[] }> {
  const answers = new Map<string, Record<string, any>>();
  const wrong: WrongAnswer[] = [];
  await Promise.all(
    creates.map(async (create) => {
      const response = await sendCreate(api, account, create);
      const body = (await response.json()) as Record<string, any>;
      answers.set(create.kind, body);
      const made = await create.made();
      if (response.status !== create.status)
        wrong.push({ kind: create.kind, problem: `${response.status} ${JSON.stringify(body).slice(0, 200)}` });
      else if (response.headers.get('idempotent-replayed') !== 'true')
        wrong.push({ kind: create.kind, problem: 'not answered as a replay' });
      else if (made.length !== 1 || made[0] !== create.idOf(body))
        wrong.push({ kind: create.kind, problem: `answered ${create.idOf(body)}, made ${JSON.stringify(made)}` });
    }),
  );
  return { answers, wrong };
}
