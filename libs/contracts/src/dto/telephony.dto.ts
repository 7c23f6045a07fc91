import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ValidateBy, ValidateIf } from 'class-validator';
import { Rule } from '../validation';
import { ServerHookFields, ServerHookResponse, toServerHookResponse } from './settings.dto';

export const SIP_TRUNK_TYPES = ['number', 'extension'] as const;
export const SIP_CALLING_FORMATS = ['+e164', 'e164', 'national'] as const;
export const INBOUND_AUTHORIZATION_TYPES = ['auth', 'ip'] as const;
export const MAX_ALLOWED_INBOUND_IPS = 100;
export const SIP_TRUNK_CREATE_FAILED = 'Failed to create SIP trunk. Please try again or contact support.';
export const SIP_TRUNK_UPDATE_FAILED = 'Failed to update SIP trunk. Please try again or contact support.';

const typeLabels: Record<string, string> = { normal: 'Normal', sip: 'SIP', caller_id: 'Caller ID' };

const HOSTNAME =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A host the SIP server is reached at: a hostname or an IP address, with no scheme and no port. */
const SipHost = () =>
  ValidateBy(
    {
      name: 'sipHost',
      validator: {
        validate: (value) => typeof value === 'string' && (isIP(value) !== 0 || HOSTNAME.test(value)),
      },
    },
    { message: 'The :attribute field must be a hostname or IP address, without scheme or port.' },
  );

/** An IPv4 or IPv6 address, or a CIDR range of either. */
export function isIpOrCidr(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (!value.includes('/')) return isIP(value) !== 0;
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/** ISO 3166-1 alpha-2, as letters; whether the country exists is checked against the phone-number metadata. */
const CountryCode = () => Rule.Pattern(/^[A-Z]{2}$/);

const PHONE_OR_EXTENSION = /^\+?[0-9A-Za-z*#._() -]+$/;

/** The fields that are optional on create and update alike. */
class SipTrunkOptionalFields {
  @ApiPropertyOptional({ type: String, maxLength: 50, nullable: true, description: '`null` clears it' })
  @Rule.OptionalText(50)
  nickname?: string | null;

  @ApiPropertyOptional({ enum: SIP_CALLING_FORMATS, default: '+e164' })
  @Rule.Sometimes()
  @Rule.OneOf(SIP_CALLING_FORMATS)
  sip_calling_format?: string;

  @ApiPropertyOptional({ enum: INBOUND_AUTHORIZATION_TYPES, default: 'auth' })
  @Rule.Sometimes()
  @Rule.OneOf(INBOUND_AUTHORIZATION_TYPES)
  inbound_authorization_type?: 'auth' | 'ip';

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_ALLOWED_INBOUND_IPS,
    description: 'Addresses or CIDR ranges allowed to send calls; required (at least one) with `ip`',
  })
  @ValidateIf(
    (request: SipTrunkOptionalFields) =>
      request.inbound_authorization_type === 'ip' ||
      (request.allowed_inbound_ips !== undefined && request.allowed_inbound_ips !== null),
  )
  @Rule.RequiredWhen('inbound authorization type', 'ip')
  @Rule.Array()
  @Rule.ArrayMin(1)
  @Rule.ArrayMax(MAX_ALLOWED_INBOUND_IPS)
  allowed_inbound_ips?: string[] | null;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'Send outbound calls through the fixed-egress proxy',
  })
  @Rule.Sometimes()
  @Rule.Boolean()
  outbound_proxy?: boolean;

  @ApiPropertyOptional({
    type: String,
    pattern: '^[A-Z]{2}$',
    description: 'ISO 3166-1 alpha-2; derived from the number when absent',
  })
  @Rule.Sometimes()
  @Rule.Required()
  @CountryCode()
  country_code?: string;
}

export class CreateSipTrunkRequest extends SipTrunkOptionalFields {
  @ApiProperty({ enum: SIP_TRUNK_TYPES })
  @Rule.Required()
  @Rule.OneOf(SIP_TRUNK_TYPES)
  sip_trunk_type: 'number' | 'extension';

  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: 15,
    description: 'Phone number (stored as E.164) or extension',
    example: '+14155550100',
  })
  @Rule.RequiredText(15)
  @Rule.Pattern(PHONE_OR_EXTENSION)
  phone_number: string;

  @ApiProperty({ type: String, minLength: 3, maxLength: 128, example: 'acme-trunk' })
  @Rule.RequiredText(128)
  @Rule.MinChars(3)
  sip_username: string;

  @ApiProperty({
    type: String,
    minLength: 3,
    maxLength: 128,
    writeOnly: true,
    description: 'Never returned',
    example: 'a-long-sip-secret',
  })
  @Rule.RequiredText(128)
  @Rule.MinChars(3)
  sip_password: string;

  @ApiProperty({ type: String, maxLength: 253, example: 'sip.carrier.example.com' })
  @Rule.RequiredText(253)
  @SipHost()
  sip_address: string;
}

/** Any subset of the fields; omitted ones stay as they are. */
export class UpdateSipTrunkRequest extends SipTrunkOptionalFields {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 15 })
  @Rule.Sometimes()
  @Rule.RequiredText(15)
  @Rule.Pattern(PHONE_OR_EXTENSION)
  phone_number?: string;

  @ApiPropertyOptional({ type: String, minLength: 3, maxLength: 128 })
  @Rule.Sometimes()
  @Rule.RequiredText(128)
  @Rule.MinChars(3)
  sip_username?: string;

  @ApiPropertyOptional({ type: String, minLength: 3, maxLength: 128, writeOnly: true, description: 'Never returned' })
  @Rule.Sometimes()
  @Rule.RequiredText(128)
  @Rule.MinChars(3)
  sip_password?: string;

  @ApiPropertyOptional({ type: String, maxLength: 253 })
  @Rule.Sometimes()
  @Rule.RequiredText(253)
  @SipHost()
  sip_address?: string;
}

export class SipTrunkResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ enum: SIP_TRUNK_TYPES }) sip_trunk_type: string;
  @ApiProperty({ type: String }) phone_number: string;
  @ApiProperty({ type: String, nullable: true }) nickname: string | null;
  @ApiProperty({ type: String }) sip_username: string;
  @ApiProperty({ type: String }) sip_address: string;
  @ApiProperty({ enum: SIP_CALLING_FORMATS }) sip_calling_format: string;
  @ApiProperty({ enum: INBOUND_AUTHORIZATION_TYPES }) inbound_authorization_type: string;
  @ApiProperty({ type: [String], nullable: true }) allowed_inbound_ips: string[] | null;
  @ApiProperty({ type: Boolean }) outbound_proxy: boolean;
  @ApiProperty({ type: String, nullable: true }) country_code: string | null;
  @ApiProperty({ type: String }) inbound_trunk_id: string;
  @ApiProperty({ type: String }) outbound_trunk_id: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class SipTrunkEnvelope {
  @ApiProperty({ type: SipTrunkResponse }) data: SipTrunkResponse;
}

export class SipTrunkMessageEnvelope extends SipTrunkEnvelope {
  @ApiProperty({ type: String }) message: string;
}

export class SipTrunkListResponse {
  @ApiProperty({ type: [SipTrunkResponse] }) data: SipTrunkResponse[];
}

export class PhoneNumberResponse extends ServerHookResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String, description: 'E.164 (an extension for SIP trunks of that type)' }) phone_number: string;
  @ApiProperty({ type: String, nullable: true }) nickname: string | null;
  @ApiProperty({ type: String, nullable: true }) country_code: string | null;
  @ApiProperty({ enum: ['normal', 'sip', 'caller_id'] }) type: string;
  @ApiProperty({ type: String, example: 'SIP' }) type_label: string;
  @ApiProperty({ type: Boolean }) sms_capable: boolean;
  @ApiProperty({
    type: String,
    description: 'Where it is provisioned; for SIP trunks the SIP server; empty when nobody recorded one',
  })
  region: string;
  @ApiProperty({ type: Boolean }) has_active_subscription: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class PhoneNumberListResponse {
  @ApiProperty({ type: [PhoneNumberResponse] }) data: PhoneNumberResponse[];
}

/** PUT /user/phone-numbers/{id}: the number's own ring-time hook, any subset; omitted fields stay as they are. */
export class UpdatePhoneNumberRequest extends ServerHookFields {}

export class PhoneNumberMessageEnvelope {
  @ApiProperty({ type: String, example: 'Phone number updated successfully.' }) message: string;
  @ApiProperty({ type: PhoneNumberResponse }) data: PhoneNumberResponse;
}

interface PhoneNumberLike {
  id: number;
  phoneNumber: string;
  nickname: string | null;
  countryCode: string | null;
  type: string;
  smsCapable: boolean;
  region: string | null;
  hasActiveSubscription: boolean;
  serverUrl: string | null;
  serverTimeoutMs: number;
  createdAt: Date;
  updatedAt: Date;
}

interface SipTrunkLike {
  sipTrunkType: string;
  sipUsername: string;
  sipAddress: string;
  sipCallingFormat: string;
  inboundAuthorizationType: string;
  allowedInboundIps: string[] | null;
  outboundProxy: boolean;
  inboundTrunkId: string | null;
  outboundTrunkId: string | null;
  updatedAt: Date;
}

/** `serverSecret` is the number's hook secret, opened for its owner (null when it has none). */
export function toPhoneNumberResponse(number: PhoneNumberLike, serverSecret: string | null): PhoneNumberResponse {
  return {
    id: number.id,
    phone_number: number.phoneNumber,
    nickname: number.nickname,
    country_code: number.countryCode,
    type: number.type,
    type_label: typeLabels[number.type] ?? number.type,
    sms_capable: number.smsCapable,
    // The spec types it as a string: a number assigned without a region answers an empty one, never null.
    region: number.region ?? '',
    has_active_subscription: number.hasActiveSubscription,
    ...toServerHookResponse({ ...number, serverSecret }),
    created_at: number.createdAt.toISOString(),
  };
}

/** The password is never part of a response. */
export function toSipTrunkResponse(number: PhoneNumberLike, trunk: SipTrunkLike): SipTrunkResponse {
  const updatedAt = trunk.updatedAt > number.updatedAt ? trunk.updatedAt : number.updatedAt;
  return {
    id: number.id,
    sip_trunk_type: trunk.sipTrunkType,
    phone_number: number.phoneNumber,
    nickname: number.nickname,
    sip_username: trunk.sipUsername,
    sip_address: trunk.sipAddress,
    sip_calling_format: trunk.sipCallingFormat,
    inbound_authorization_type: trunk.inboundAuthorizationType,
    allowed_inbound_ips: trunk.inboundAuthorizationType === 'ip' ? trunk.allowedInboundIps : null,
    outbound_proxy: trunk.outboundProxy,
    country_code: number.countryCode,
    inbound_trunk_id: trunk.inboundTrunkId ?? '',
    outbound_trunk_id: trunk.outboundTrunkId ?? '',
    created_at: number.createdAt.toISOString(),
    updated_at: updatedAt.toISOString(),
  };
}
