/**
 * Preloaded (`-r`) into a built API by bench/list-throughput.ts to learn which statements each list request runs, so
 * that the bare server runs exactly those: every statement a `pg` client sends is appended to STATEMENT_LOG, once it
 * has answered, as a JSON line `[text, values, asked, answered]`. The last two are numbered on one counter: `asked`
 * when the code asked for it (the pool's checkout, or the send on a client already held), `answered` when its rows
 * came back; a statement asked for after another's answer may have waited for it. Only the process that learns the
 * statements has this; the measured API does not.
 */
import { appendFileSync } from 'node:fs';
import { Client, Pool } from 'pg';

const log = process.env.STATEMENT_LOG;
if (!log) throw new Error('STATEMENT_LOG names the file the statements are written to');
const ASKED = Symbol('asked');
type Marked = Client & { [ASKED]?: number };
let events = 0;

const connect = Pool.prototype.connect as (...args: unknown[]) => unknown;
Pool.prototype.connect = function (this: Pool, callback?: (...results: unknown[]) => void) {
  const asked = ++events;
  const mark = (client: unknown) => {
    if (client) (client as Marked)[ASKED] = asked;
  };
  if (callback)
    return connect.call(this, (error: unknown, client: unknown, done: unknown) => {
      mark(client);
      callback(error, client, done);
    });
  return (connect.call(this) as Promise<Client>).then((client) => {
    mark(client);
    return client;
  });
} as typeof Pool.prototype.connect;

const query = Client.prototype.query as (...args: unknown[]) => unknown;
Client.prototype.query = function (this: Marked, ...args: unknown[]) {
  const [config, values] = args as [string | { text?: string; values?: unknown[] }, unknown];
  const text = typeof config === 'string' ? config : config?.text;
  if (!text) return query.apply(this, args);
  const parameters = Array.isArray(values) ? values : typeof config === 'object' ? config?.values : undefined;
  const asked = this[ASKED] ?? ++events;
  delete this[ASKED];
  const answered = () => appendFileSync(log, `${JSON.stringify([text, parameters ?? [], asked, ++events])}\n`);
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...results: unknown[]) => void;
    args[last] = (...results: unknown[]) => {
      answered();
      callback(...results);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args) as Promise<unknown> | undefined;
  if (typeof result?.then !== 'function') return result;
  return result.then((value) => {
    answered();
    return value;
  });
} as typeof Client.prototype.query;
