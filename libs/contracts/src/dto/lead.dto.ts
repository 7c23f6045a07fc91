import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Rule } from '../validation';
import { ScalarMap } from './assistant.dto';
import { PageQuery } from './pagination.dto';
import { RequestExample } from './request-example';

export const LEAD_STATUSES = [
  'created',
  'scheduled',
  'processing',
  'completed',
  'rescheduled',
  'reached-max-retries',
  'blacklisted',
] as const;
/** Leads with calls still to come: a campaign with none left is completed, and cannot be started. */
export const OPEN_LEAD_STATUSES: readonly string[] = ['created', 'scheduled', 'processing', 'rescheduled'];
/** A lead or secondary contact in one of these is done with: it is never called again. */
export const FINAL_LEAD_STATUSES: readonly string[] = ['completed', 'reached-max-retries'];
export const MAX_SECONDARY_CONTACTS = 10;

/** `YYYY-MM-DD HH:MM:SS` in UTC, as leads and calls show their times. */
export function utcDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export class SecondaryContactRequest {
  @ApiProperty({ type: String, maxLength: 32, description: 'E.164' })
  @Rule.RequiredText(32)
  phone_number: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;
}

@RequestExample({ phone_number: '+14155550123', campaign_id: 1 })
export class CreateLeadRequest {
  @ApiProperty({ type: String, maxLength: 32, description: 'International format; stored as E.164' })
  @Rule.RequiredText(32)
  phone_number: string;

  @ApiProperty({ type: 'integer' })
  @Rule.Required()
  @Rule.Id()
  campaign_id: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Text, number or boolean values' })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;

  @ApiPropertyOptional({ type: [SecondaryContactRequest], maxItems: MAX_SECONDARY_CONTACTS })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_SECONDARY_CONTACTS)
  @Rule.EachNested(() => SecondaryContactRequest)
  secondary_contacts?: SecondaryContactRequest[];

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Allow a number already in the campaign' })
  @Rule.Optional()
  @Transform(Rule.toBoolean)
  @Rule.Boolean()
  allow_duplicate?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    description: 'Old spelling of `allow_duplicate`, still accepted',
    deprecated: true,
  })
  @Rule.Optional()
  @Transform(Rule.toBoolean)
  @Rule.Boolean()
  allow_dupplicate?: boolean;
}

export class UpdateLeadRequest {
  @ApiPropertyOptional({ type: String, maxLength: 32 })
  @Rule.Sometimes()
  @Rule.RequiredText(32)
  phone_number?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;

  @ApiPropertyOptional({
    type: [SecondaryContactRequest],
    maxItems: MAX_SECONDARY_CONTACTS,
    description: 'Replaces them',
  })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_SECONDARY_CONTACTS)
  @Rule.EachNested(() => SecondaryContactRequest)
  secondary_contacts?: SecondaryContactRequest[];

  @ApiPropertyOptional({ enum: ['blacklisted', 'created'], description: 'Blacklist a lead, or take it back' })
  @Rule.Sometimes()
  @Rule.OneOf(['blacklisted', 'created'])
  status?: 'blacklisted' | 'created';
}

export class LeadListQuery extends PageQuery {
  @ApiPropertyOptional({ enum: LEAD_STATUSES })
  @Rule.Optional()
  @Rule.OneOf(LEAD_STATUSES)
  status?: string;

  @ApiPropertyOptional({ type: 'integer' })
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, Rule.MAX_ID)
  campaign_id?: number;

  @ApiPropertyOptional({ type: String, maxLength: 32, description: 'Part of the number' })
  @Rule.PhoneNumberPart()
  phone_number?: string;

  @ApiPropertyOptional({ type: String, format: 'date', description: 'Created on or after (UTC)' })
  @Rule.Optional()
  @Rule.DateYmd()
  date_from?: string;

  @ApiPropertyOptional({ type: String, format: 'date', description: 'Created on or before (UTC)' })
  @Rule.Optional()
  @Rule.DateYmd()
  date_to?: string;
}

export class SecondaryContactResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) phone_number: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) variables: Record<string, unknown>;
  @ApiProperty({ enum: LEAD_STATUSES }) status: string;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) created_at: string;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) updated_at: string;
}

class LeadCampaign {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
}

export class LeadResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: 'integer' }) campaign_id: number;
  @ApiProperty({ type: String }) phone_number: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) variables: Record<string, unknown>;
  @ApiProperty({ enum: LEAD_STATUSES }) status: string;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) created_at: string;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) updated_at: string;
  @ApiProperty({ type: LeadCampaign }) campaign: LeadCampaign;
  @ApiProperty({ type: [SecondaryContactResponse] }) secondary_contacts: SecondaryContactResponse[];
}

export class LeadEnvelope {
  @ApiProperty({ type: LeadResponse }) data: LeadResponse;
}

export class LeadMessageEnvelope extends LeadEnvelope {
  @ApiProperty({ type: String }) message: string;
}

export class LeadImportError {
  @ApiProperty({ type: 'integer', description: 'Line of the file (the header is line 1)' }) row: number;
  @ApiProperty({ type: String }) column: string;
  @ApiProperty({ type: String }) message: string;
}

export class LeadImportResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ enum: ['pending', 'processing', 'completed', 'failed'] }) status: string;
  @ApiProperty({ type: 'integer' }) rows_total: number;
  @ApiProperty({ type: 'integer' }) rows_imported: number;
  @ApiProperty({ type: 'integer' }) rows_failed: number;
  @ApiProperty({ type: [LeadImportError], description: 'The first 100; all of them as CSV at `.../errors.csv`' })
  errors: LeadImportError[];
}

export class LeadImportEnvelope {
  @ApiProperty({ type: LeadImportResponse }) data: LeadImportResponse;
}

class LeadImportAccepted {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ enum: ['pending'] }) status: string;
}

export class LeadImportAcceptedResponse {
  @ApiProperty({ type: String }) message: string;
  @ApiProperty({ type: LeadImportAccepted }) data: LeadImportAccepted;
}

/** A CSV upload of leads (the upload interceptor hands the file over as `file`). */
export class ImportLeadsRequest {
  @ApiProperty({ type: 'string', format: 'binary', description: 'CSV, at most 20 MB' })
  @Transform(({ obj }) => obj.file, { toClassOnly: true })
  @Rule.Required()
  file?: { originalName: string; size: number; buffer: Buffer };
}

/** A lead as libs/database's `LeadsRepository` reads it for its routes: its campaign's name and its secondary contacts. */
export interface LeadRow {
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

export function toLeadResponse(row: LeadRow): LeadResponse {
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

/** An import's progress, as its route answers it. */
export interface LeadImportProgressRow {
  id: number;
  status: string;
  rows_total: number;
  rows_imported: number;
  rows_failed: number;
}

/** An import's progress, with the first of its rows that were not imported. */
export function toLeadImportResponse(row: LeadImportProgressRow, errors: LeadImportError[]): LeadImportResponse {
  return {
    id: row.id,
    status: row.status,
    rows_total: row.rows_total,
    rows_imported: row.rows_imported,
    rows_failed: row.rows_failed,
    errors,
  };
}
