import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';
import { TimeZone } from './assistant.dto';
import { RequestExample } from './request-example';

export const CAMPAIGN_STATUSES = ['draft', 'in-progress', 'stopped', 'completed'] as const;
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export const CAMPAIGN_ACTIONS = ['start', 'stop'] as const;
const HOUR_MINUTE = /^([01]\d|2[0-3]):[0-5]\d$/;

class CampaignOptionalFields {
  @ApiPropertyOptional({ type: String, default: 'UTC', example: 'America/New_York' })
  @Rule.Sometimes()
  @Rule.Required()
  @TimeZone()
  timezone?: string;

  @ApiPropertyOptional({
    type: 'integer',
    isArray: true,
    maxItems: 100,
    description: 'Caller numbers, used in turn; replaces the list',
  })
  @Rule.Sometimes()
  @Rule.IdList(100)
  phone_number_ids?: number[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10, default: 3 })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(1, 10)
  max_calls_in_parallel?: number;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '09:00',
    description: '`HH:MM` in the campaign timezone',
  })
  @Rule.Optional()
  @Rule.String()
  @Rule.Pattern(HOUR_MINUTE)
  allowed_hours_start_time?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: '17:00' })
  @Rule.Optional()
  @Rule.String()
  @Rule.Pattern(HOUR_MINUTE)
  allowed_hours_end_time?: string | null;

  @ApiPropertyOptional({ type: [String], enum: WEEKDAYS, isArray: true, description: 'Default: every day' })
  @Rule.Sometimes()
  @Rule.Array()
  @Rule.ArrayMax(7)
  @Rule.OneOf(WEEKDAYS, { each: true })
  allowed_days?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 5, default: 3 })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(1, 5)
  max_retries?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 10,
    maximum: 4320,
    default: 60,
    description: 'Minutes between tries',
  })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(10, 4320)
  retry_interval?: number;
}

@RequestExample({ name: 'Spring follow-up', assistant_id: 1 })
export class CreateCampaignRequest extends CampaignOptionalFields {
  @ApiProperty({ type: String, maxLength: 255 })
  @Rule.RequiredText()
  name: string;

  @ApiProperty({ type: 'integer', description: 'An outbound assistant of the account' })
  @Rule.Required()
  @Rule.Id()
  assistant_id: number;
}

export class UpdateCampaignRequest extends CampaignOptionalFields {
  @ApiPropertyOptional({ type: String, maxLength: 255 })
  @Rule.Sometimes()
  @Rule.RequiredText()
  name?: string;

  @ApiPropertyOptional({ type: 'integer' })
  @Rule.Sometimes()
  @Rule.Id()
  assistant_id?: number;
}

export class CampaignStatusRequest {
  @ApiProperty({ type: 'integer' })
  @Rule.Required()
  @Rule.Id()
  campaign_id: number;

  @ApiProperty({ enum: CAMPAIGN_ACTIONS })
  @Rule.Required()
  @Rule.OneOf(CAMPAIGN_ACTIONS)
  action: 'start' | 'stop';
}

export class CampaignResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ type: 'integer', nullable: true }) assistant_id: number | null;
  @ApiProperty({ enum: CAMPAIGN_STATUSES }) status: string;
  @ApiProperty({ type: String }) timezone: string;
  @ApiProperty({ type: 'integer', isArray: true }) phone_number_ids: number[];
  @ApiProperty({ type: 'integer' }) max_calls_in_parallel: number;
  @ApiProperty({ type: String, nullable: true }) allowed_hours_start_time: string | null;
  @ApiProperty({ type: String, nullable: true }) allowed_hours_end_time: string | null;
  @ApiProperty({ type: [String], enum: WEEKDAYS, isArray: true }) allowed_days: string[];
  @ApiProperty({ type: 'integer' }) max_retries: number;
  @ApiProperty({ type: 'integer' }) retry_interval: number;
  @ApiProperty({ type: 'integer' }) leads_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CampaignEnvelope {
  @ApiProperty({ type: CampaignResponse }) data: CampaignResponse;
}

export class CampaignMessageEnvelope extends CampaignEnvelope {
  @ApiProperty({ type: String }) message: string;
}

class CampaignStatusData {
  @ApiProperty({ type: 'integer' }) campaign_id: number;
  @ApiProperty({ enum: CAMPAIGN_STATUSES }) status: string;
}

export class CampaignStatusResponse {
  @ApiProperty({ type: String }) message: string;
  @ApiProperty({ type: Boolean }) success: boolean;
  @ApiProperty({ type: CampaignStatusData }) data: CampaignStatusData;
}

/** A campaign as libs/database's `CampaignsRepository` reads it for its routes: its caller numbers in order and how many leads it has. */
export interface CampaignRow {
  id: number;
  name: string;
  assistant_id: number | null;
  status: string;
  timezone: string;
  max_calls_in_parallel: number;
  allowed_hours_start_time: string | null;
  allowed_hours_end_time: string | null;
  allowed_days: string[];
  max_retries: number;
  retry_interval: number;
  created_at: Date;
  updated_at: Date;
  phone_number_ids: number[];
  leads_count: number;
}

export function toCampaignResponse(row: CampaignRow): CampaignResponse {
  return {
    id: row.id,
    name: row.name,
    assistant_id: row.assistant_id,
    status: row.status,
    timezone: row.timezone,
    phone_number_ids: row.phone_number_ids,
    max_calls_in_parallel: row.max_calls_in_parallel,
    allowed_hours_start_time: row.allowed_hours_start_time,
    allowed_hours_end_time: row.allowed_hours_end_time,
    allowed_days: row.allowed_days,
    max_retries: row.max_retries,
    retry_interval: row.retry_interval,
    leads_count: row.leads_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
