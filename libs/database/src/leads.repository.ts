import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { LeadListQuery, LeadRow } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlFilter } from './sql-filter';
import { SqlRepository } from './sql-repository';

/** What a lead's list may be filtered by. */
export type LeadFilter = Pick<LeadListQuery, 'status' | 'campaign_id' | 'phone_number' | 'date_from' | 'date_to'>;

const SELECT_LEADS = `
  SELECT l.id, l.campaign_id, c.name AS campaign_name, l.phone_number, l.variables, l.status, l.created_at, l.updated_at
    FROM leads l JOIN campaigns c ON c.id = l.campaign_id`;

/**
 * The leads `leads` selects (a SELECT_LEADS query), each with its secondary contacts, in one statement. The
 * contacts are gathered around the finished selection, so a page far down reads contacts for its own rows only
 * (not for the rows its OFFSET skips). `order` names the columns as `page.`.
 */
const withContacts = (leads: string, order: string) => `
  SELECT page.*,
         (SELECT COALESCE(json_agg(json_build_object('id', s.id, 'phone_number', s.phone_number, 'variables', s.variables,
                                                     'status', s.status, 'created_at', s.created_at,
                                                     'updated_at', s.updated_at) ORDER BY s.position), '[]')
            FROM lead_secondary_contacts s WHERE s.lead_id = page.id) AS secondary_contacts
    FROM (${leads}) page ORDER BY ${order}`;

/** The leads of an account's campaigns, with their secondary contacts. Writes run in the caller's transaction. */
@Injectable()
export class LeadsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** A page of the account's leads, newest first, and the exact total; each filter is one indexed condition. */
  async list(ownerId: number, query: LeadFilter, limit: number, offset: number): Promise<[LeadRow[], number]> {
    const filter = new SqlFilter((p) => `l.user_id = ${p}`, ownerId);
    const add = filter.where.bind(filter);
    if (query.status) add((p) => `l.status = ${p}`, query.status);
    if (query.campaign_id !== undefined) add((p) => `l.campaign_id = ${p}`, query.campaign_id);
    if (query.phone_number) filter.numberContaining('l.phone_number', 'l.user_id', query.phone_number);
    if (query.date_from) add((p) => `l.created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `l.created_at < ${p}::date + 1`, query.date_to);
    const where = filter.sql;
    const parameters = filter.values;
    // Newest first either way; with a date range, by creation time so the (user, created_at, id) index serves it.
    const dated = Boolean(query.date_from || query.date_to);
    const newestFirst = (alias: string) => (dated ? `${alias}.created_at DESC, ${alias}.id DESC` : `${alias}.id DESC`);
    return Promise.all([
      this.reads.query<LeadRow>(
        ownerId,
        withContacts(
          `${SELECT_LEADS} WHERE ${where} ORDER BY ${newestFirst('l')} LIMIT ${filter.next()} OFFSET ${filter.next(2)}`,
          newestFirst('page'),
        ),
        [...parameters, limit, offset],
      ),
      this.total(ownerId, query, where, parameters),
    ]);
  }

  /**
   * The exact total, from the counters the triggers keep when the filters allow it: none, one status or campaign
   * (one row), or only a date range (one row a day). A phone-number filter or a combination counts rows.
   */
  private async total(ownerId: number, query: LeadFilter, where: string, parameters: unknown[]): Promise<number> {
    const equality = [query.status, query.campaign_id].filter((value) => value !== undefined && value !== null);
    const dated = Boolean(query.date_from || query.date_to);
    if (!query.phone_number && equality.length + (dated ? 1 : 0) <= 1) {
      if (dated) {
        const [row] = await this.reads.query(
          ownerId,
          `SELECT COALESCE(sum(total), 0)::int AS total FROM lead_counts
            WHERE user_id = $1 AND bucket LIKE 'd%' AND bucket >= $2 AND bucket <= $3`,
          [ownerId, `d${query.date_from ?? '0000-00-00'}`, `d${query.date_to ?? '9999-99-99'}`],
        );
        return row.total;
      }
      const bucket = query.status ?? (query.campaign_id !== undefined ? `#${query.campaign_id}` : '');
      const [row] = await this.reads.query(
        ownerId,
        `SELECT total::int FROM lead_counts WHERE user_id = $1 AND bucket = $2`,
        [ownerId, bucket],
      );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.reads.query(
      ownerId,
      `SELECT count(*)::int AS total FROM leads l WHERE ${where}`,
      parameters,
    );
    return total;
  }

  /** In the transaction, on it; outside one, where the account's reads go (a replica fresh enough, or the primary). */
  find(ownerId: number, id: number): Promise<LeadRow | undefined> {
    return this.inTransaction
      ? this.select(this.manager, ownerId, id)
      : this.reads.read(ownerId, (dataSource) => this.select(dataSource.manager, ownerId, id));
  }

  private async select(manager: EntityManager, ownerId: number, id: number): Promise<LeadRow | undefined> {
    const rows: LeadRow[] = await manager.query(
      withContacts(`${SELECT_LEADS} WHERE l.id = $1 AND l.user_id = $2`, 'page.id'),
      [id, ownerId],
    );
    return rows[0];
  }

  /**
   * Locks the account's campaign a lead is written in; false when there is none. Without duplicates allowed it is
   * held exclusively, so that creates racing each other check and insert one at a time.
   */
  async lockCampaign(ownerId: number, campaignId: number, allowDuplicate: boolean): Promise<boolean> {
    const [campaign] = await this.manager.query(
      `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 ${allowDuplicate ? 'FOR SHARE' : 'FOR UPDATE'}`,
      [campaignId, ownerId],
    );
    return Boolean(campaign);
  }

  async existsInCampaign(campaignId: number, phoneNumber: string): Promise<boolean> {
    const [existing] = await this.manager.query(
      `SELECT 1 FROM leads WHERE campaign_id = $1 AND phone_number = $2 LIMIT 1`,
      [campaignId, phoneNumber],
    );
    return Boolean(existing);
  }

  /** Those of `phoneNumbers` the campaign has leads of. */
  async phoneNumbersInCampaign(campaignId: number, phoneNumbers: string[]): Promise<string[]> {
    const rows: { phone_number: string }[] = await this.manager.query(
      `SELECT phone_number FROM leads WHERE campaign_id = $1 AND phone_number = ANY($2)`,
      [campaignId, phoneNumbers],
    );
    return rows.map((row) => row.phone_number);
  }

  async insert(
    ownerId: number,
    campaignId: number,
    phoneNumber: string,
    variables: Record<string, unknown>,
  ): Promise<number> {
    const [{ id }] = await this.manager.query(
      `INSERT INTO leads (user_id, campaign_id, phone_number, variables) VALUES ($1, $2, $3, $4) RETURNING id`,
      [ownerId, campaignId, phoneNumber, JSON.stringify(variables)],
    );
    return id;
  }

  /** Leads of the campaign, one statement for all (an imported file's batch). */
  async insertMany(
    ownerId: number,
    campaignId: number,
    leads: { phone: string; variables: Record<string, string> }[],
  ): Promise<void> {
    await this.manager.query(
      `INSERT INTO leads (user_id, campaign_id, phone_number, variables)
           SELECT $1, $2, item->>'phone', item->'variables' FROM jsonb_array_elements($3::jsonb) AS rows(item)`,
      [ownerId, campaignId, JSON.stringify(leads)],
    );
  }

  /** Holds the account's lead against other writes until the transaction ends; false when there is none. */
  async lock(ownerId: number, id: number): Promise<boolean> {
    const [locked] = await this.manager.query(`SELECT id FROM leads WHERE id = $1 AND user_id = $2 FOR NO KEY UPDATE`, [
      id,
      ownerId,
    ]);
    return Boolean(locked);
  }

  /** Sets the values given; those left out are kept. */
  async update(
    ownerId: number,
    id: number,
    values: { phone_number?: string; variables?: Record<string, unknown>; status?: string },
  ): Promise<void> {
    await this.manager.query(
      `UPDATE leads SET phone_number = COALESCE($3, phone_number), variables = COALESCE($4::jsonb, variables),
                          status = COALESCE($5, status), updated_at = now()
          WHERE id = $1 AND user_id = $2`,
      [
        id,
        ownerId,
        values.phone_number ?? null,
        values.variables === undefined ? null : JSON.stringify(values.variables),
        values.status ?? null,
      ],
    );
  }

  /** The lead's secondary contacts become `contacts`, in that order. */
  async replaceContacts(leadId: number, contacts: { phoneNumber: string; variables: object }[]): Promise<void> {
    await this.manager.query(`DELETE FROM lead_secondary_contacts WHERE lead_id = $1`, [leadId]);
    if (contacts.length === 0) return;
    await this.manager.query(
      `INSERT INTO lead_secondary_contacts (lead_id, position, phone_number, variables)
       SELECT $1, position, contact->>'phoneNumber', contact->'variables'
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS item(contact, position)`,
      [leadId, JSON.stringify(contacts)],
    );
  }

  /** Returns false when the account has no such lead. */
  async delete(ownerId: number, id: number): Promise<boolean> {
    return (await this.changed(`DELETE FROM leads WHERE id = $1 AND user_id = $2`, [id, ownerId])) > 0;
  }
}
