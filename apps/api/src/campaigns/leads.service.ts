import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
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
  MessageResponse,
  SecondaryContactRequest,
  toE164,
  toLeadResponse,
  UpdateLeadRequest,
  ValidationFailed,
  pageOffset,
} from '@app/contracts';
import { LeadsRepository, Transactions } from '@app/database';
import { pageOfList } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

@Injectable()
export class LeadsService implements OnModuleInit {
  constructor(
    private readonly leads: LeadsRepository,
    private readonly transactions: Transactions,
    private readonly config: AppConfig,
    private readonly creates: IdempotentCreates,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith('lead', async (user, id) => this.created(await this.read(this.leads, user, id)));
  }

  /** Newest first, with the exact total. */
  async list(user: AuthenticatedUser, query: LeadListQuery, request: Request): Promise<LengthAwarePage<LeadResponse>> {
    const [rows, total] = await this.leads.list(user.id, query, query.per_page, pageOffset(query));
    return pageOfList(rows.map(toLeadResponse), total, query, request, this.config.appUrl);
  }

  async get(user: AuthenticatedUser, id: number): Promise<LeadEnvelope> {
    return { data: await this.read(this.leads, user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateLeadRequest): Promise<LeadMessageEnvelope> {
    const phoneNumber = this.normalise(request.phone_number, 'phone_number');
    const contacts = this.normaliseContacts(request.secondary_contacts);
    const data = await this.transactions.run(async (transaction) => {
      const leads = this.leads.within(transaction);
      const allowDuplicate = request.allow_duplicate ?? request.allow_dupplicate ?? false;
      // Without duplicates, the campaign's row lock makes check and insert one step for creates racing each other.
      if (!(await leads.lockCampaign(user.id, request.campaign_id, allowDuplicate))) {
        throw ValidationFailed.field('campaign_id', 'The selected campaign id is invalid.');
      }
      if (!allowDuplicate && (await leads.existsInCampaign(request.campaign_id, phoneNumber))) {
        throw ValidationFailed.field('phone_number', 'The phone number has already been taken.');
      }
      const id = await leads.insert(user.id, request.campaign_id, phoneNumber, request.variables ?? {});
      await leads.replaceContacts(id, contacts);
      await this.creates.record(transaction, 'lead', id);
      return this.read(leads, user, id);
    });
    return this.created(data);
  }

  private created(data: LeadResponse): LeadMessageEnvelope {
    return { message: 'Lead created successfully.', data };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateLeadRequest): Promise<LeadMessageEnvelope> {
    const phoneNumber =
      request.phone_number === undefined ? undefined : this.normalise(request.phone_number, 'phone_number');
    const contacts =
      request.secondary_contacts === undefined ? undefined : this.normaliseContacts(request.secondary_contacts);
    const data = await this.transactions.runRetrying(async (transaction) => {
      const leads = this.leads.within(transaction);
      // Locked first, so that a concurrent delete either waits for this update or makes it a 404.
      if (!(await leads.lock(user.id, id))) throw Errors.leadNotFound();
      const current = await this.read(leads, user, id);
      if (
        request.status !== undefined &&
        !['blacklisted', 'created'].includes(current.status) &&
        request.status === 'created'
      ) {
        throw ValidationFailed.field('status', 'Only a blacklisted lead can be taken back.');
      }
      await leads.update(user.id, id, {
        phone_number: phoneNumber,
        variables: request.variables,
        status: request.status,
      });
      if (contacts) await leads.replaceContacts(id, contacts);
      return this.read(leads, user, id);
    });
    return { message: 'Lead updated successfully.', data };
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.leads.delete(user.id, id))) throw Errors.leadNotFound();
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

  private async read(leads: LeadsRepository, user: AuthenticatedUser, id: number): Promise<LeadResponse> {
    const row = await leads.find(user.id, id);
    if (!row) throw Errors.leadNotFound();
    return toLeadResponse(row);
  }
}
