import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  CreateLeadRequest,
  Errors,
  INVALID_PHONE_NUMBER,
  LeadEnvelope,
  LeadListQuery,
  LeadMessageEnvelope,
  LeadResponse,
  LengthAwarePage,
  lengthAwarePage,
  MessageResponse,
  SecondaryContactRequest,
  toE164,
  UpdateLeadRequest,
  utcDateTime,
  ValidationFailed,
} from '@app/contracts';
import { ReadReplicas, retryingTransaction, SqlFilter } from '@app/database';
import { pageLocation } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';

interface LeadRow {
  id: number;
  campaign_id: number;
  campaign_name: string;
  phone_number: string;
  variables: Record<string, unknown>;
  status: string;
  created_at: Date;
  updated_at: Date;
  /** In order; timestamps as JSON renders them. */
  secondary_contacts: {
    id: number;
    phone_number: string;
    variables: Record<string, unknown>;
    status: string;
    created_at: string;
    updated_at: string;
  }[];
}

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

@Injectable()
export class LeadsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reads: ReadReplicas,
    private readonly config: AppConfig,
  ) {}

  /** Newest first; each filter is one indexed condition, and the total is exact. */
  async list(user: AuthenticatedUser, query: LeadListQuery, request: Request): Promise<LengthAwarePage<LeadResponse>> {
    const filter = new SqlFilter((p) => `l.user_id = ${p}`, user.id);
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
    const [rows, total] = await Promise.all([
      this.reads.query(
        user.id,
        withContacts(
          `${SELECT_LEADS} WHERE ${where} ORDER BY ${newestFirst('l')} LIMIT ${filter.next()} OFFSET ${filter.next(2)}`,
          newestFirst('page'),
        ),
        [...parameters, query.per_page, (query.page - 1) * query.per_page],
      ) as Promise<LeadRow[]>,
      this.total(user, query, where, parameters),
    ]);
    return lengthAwarePage(
      rows.map(toLeadResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  /**
   * The exact total, from the counters the triggers keep when the filters allow it: none, one status or campaign
   * (one row), or only a date range (one row a day). A phone-number filter or a combination counts rows.
   */
  private async total(
    user: AuthenticatedUser,
    query: LeadListQuery,
    where: string,
    parameters: unknown[],
  ): Promise<number> {
    const equality = [query.status, query.campaign_id].filter((value) => value !== undefined && value !== null);
    const dated = Boolean(query.date_from || query.date_to);
    if (!query.phone_number && equality.length + (dated ? 1 : 0) <= 1) {
      if (dated) {
        const [row] = await this.reads.query(
          user.id,
          `SELECT COALESCE(sum(total), 0)::int AS total FROM lead_counts
            WHERE user_id = $1 AND bucket LIKE 'd%' AND bucket >= $2 AND bucket <= $3`,
          [user.id, `d${query.date_from ?? '0000-00-00'}`, `d${query.date_to ?? '9999-99-99'}`],
        );
        return row.total;
      }
      const bucket = query.status ?? (query.campaign_id !== undefined ? `#${query.campaign_id}` : '');
      const [row] = await this.reads.query(
        user.id,
        `SELECT total::int FROM lead_counts WHERE user_id = $1 AND bucket = $2`,
        [user.id, bucket],
      );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.reads.query(
      user.id,
      `SELECT count(*)::int AS total FROM leads l WHERE ${where}`,
      parameters,
    );
    return total;
  }

  async get(user: AuthenticatedUser, id: number): Promise<LeadEnvelope> {
    return { data: await this.reads.read(user.id, (dataSource) => this.read(dataSource.manager, user, id)) };
  }

  async create(user: AuthenticatedUser, request: CreateLeadRequest): Promise<LeadMessageEnvelope> {
    const phoneNumber = this.normalise(request.phone_number, 'phone_number');
    const contacts = this.normaliseContacts(request.secondary_contacts);
    const data = await this.dataSource.transaction(async (manager) => {
      const allowDuplicate = request.allow_duplicate ?? request.allow_dupplicate ?? false;
      // Without duplicates, the campaign's row lock makes check and insert one step for creates racing each other.
      const [campaign] = await manager.query(
        `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 ${allowDuplicate ? 'FOR SHARE' : 'FOR UPDATE'}`,
        [request.campaign_id, user.id],
      );
      if (!campaign) throw ValidationFailed.field('campaign_id', 'The selected campaign id is invalid.');
      if (!allowDuplicate) {
        const [existing] = await manager.query(
          `SELECT 1 FROM leads WHERE campaign_id = $1 AND phone_number = $2 LIMIT 1`,
          [campaign.id, phoneNumber],
        );
        if (existing) throw ValidationFailed.field('phone_number', 'The phone number has already been taken.');
      }
      const [{ id }] = await manager.query(
        `INSERT INTO leads (user_id, campaign_id, phone_number, variables) VALUES ($1, $2, $3, $4) RETURNING id`,
        [user.id, campaign.id, phoneNumber, JSON.stringify(request.variables ?? {})],
      );
      await this.replaceContacts(manager, id, contacts);
      return this.read(manager, user, id);
    });
    return { message: 'Lead created successfully.', data };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateLeadRequest): Promise<LeadMessageEnvelope> {
    const phoneNumber =
      request.phone_number === undefined ? undefined : this.normalise(request.phone_number, 'phone_number');
    const contacts =
      request.secondary_contacts === undefined ? undefined : this.normaliseContacts(request.secondary_contacts);
    const data = await retryingTransaction(this.dataSource, async (manager) => {
      // Locked first, so that a concurrent delete either waits for this update or makes it a 404.
      const [locked] = await manager.query(`SELECT id FROM leads WHERE id = $1 AND user_id = $2 FOR NO KEY UPDATE`, [
        id,
        user.id,
      ]);
      if (!locked) throw Errors.leadNotFound();
      const current = await this.read(manager, user, id);
      if (
        request.status !== undefined &&
        !['blacklisted', 'created'].includes(current.status) &&
        request.status === 'created'
      ) {
        throw ValidationFailed.field('status', 'Only a blacklisted lead can be taken back.');
      }
      await manager.query(
        `UPDATE leads SET phone_number = COALESCE($3, phone_number), variables = COALESCE($4::jsonb, variables),
                          status = COALESCE($5, status), updated_at = now()
          WHERE id = $1 AND user_id = $2`,
        [
          id,
          user.id,
          phoneNumber ?? null,
          request.variables === undefined ? null : JSON.stringify(request.variables),
          request.status ?? null,
        ],
      );
      if (contacts) await this.replaceContacts(manager, id, contacts);
      return this.read(manager, user, id);
    });
    return { message: 'Lead updated successfully.', data };
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    const [, deleted] = (await this.dataSource.query(`DELETE FROM leads WHERE id = $1 AND user_id = $2`, [
      id,
      user.id,
    ])) as [unknown, number];
    if (deleted === 0) throw Errors.leadNotFound();
    return { message: 'Lead deleted successfully.' };
  }

  private normalise(value: string, field: string): string {
    const e164 = toE164(value);
    if (!e164) throw ValidationFailed.field(field, INVALID_PHONE_NUMBER(field.replace(/_/g, ' ')));
    return e164;
  }

  private normaliseContacts(contacts: SecondaryContactRequest[] = []) {
    const errors: Record<string, string[]> = {};
    const normalised = contacts.map((contact, index) => {
      const e164 = toE164(contact.phone_number);
      if (!e164)
        errors[`secondary_contacts.${index}.phone_number`] = [
          INVALID_PHONE_NUMBER(`secondary contacts.${index}.phone number`),
        ];
      return { phoneNumber: e164 ?? '', variables: contact.variables ?? {} };
    });
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
    return normalised;
  }

  private async replaceContacts(
    manager: EntityManager,
    leadId: number,
    contacts: { phoneNumber: string; variables: object }[],
  ) {
    await manager.query(`DELETE FROM lead_secondary_contacts WHERE lead_id = $1`, [leadId]);
    if (contacts.length === 0) return;
    await manager.query(
      `INSERT INTO lead_secondary_contacts (lead_id, position, phone_number, variables)
       SELECT $1, position, contact->>'phoneNumber', contact->'variables'
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS item(contact, position)`,
      [leadId, JSON.stringify(contacts)],
    );
  }

  private async read(manager: EntityManager, user: AuthenticatedUser, id: number): Promise<LeadResponse> {
    const rows: LeadRow[] = await manager.query(
      withContacts(`${SELECT_LEADS} WHERE l.id = $1 AND l.user_id = $2`, 'page.id'),
      [id, user.id],
    );
    if (rows.length === 0) throw Errors.leadNotFound();
    return toLeadResponse(rows[0]);
  }
}

function toLeadResponse(row: LeadRow): LeadResponse {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    phone_number: row.phone_number,
    variables: row.variables,
    status: row.status,
    created_at: utcDateTime(row.created_at),
    updated_at: utcDateTime(row.updated_at),
    campaign: { id: row.campaign_id, name: row.campaign_name },
    secondary_contacts: row.secondary_contacts.map((contact) => ({
      id: contact.id,
      phone_number: contact.phone_number,
      variables: contact.variables,
      status: contact.status,
      created_at: utcDateTime(new Date(contact.created_at)),
      updated_at: utcDateTime(new Date(contact.updated_at)),
    })),
  };
}
