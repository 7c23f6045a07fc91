import { Injectable, type OnModuleInit } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { AppConfig } from '@app/config';
import {
  CreateSipTrunkRequest,
  countryOfNumber,
  INVALID_PHONE_NUMBER,
  toE164,
  DomainError,
  Errors,
  humaniseAttribute,
  isIpOrCidr,
  SIP_TRUNK_CREATE_FAILED,
  SIP_TRUNK_UPDATE_FAILED,
  SipTrunkEnvelope,
  SipTrunkListResponse,
  SipTrunkMessageEnvelope,
  SipTrunkResponse,
  toSipTrunkResponse,
  UpdateSipTrunkRequest,
  ValidationFailed,
} from '@app/contracts';
import { SecretBox, SecretContexts } from '@app/crypto';
import {
  InjectTenantRepository,
  PHONE_NUMBER_TAKEN,
  PhoneNumber,
  SipTrunksRepository,
  TenantRepository,
  Transactions,
  type TrunkChanges,
  whenUnique,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

const POLL_MS = 100;
const numberTaken = () => ValidationFailed.field('phone_number', PHONE_NUMBER_TAKEN);
const providerFailed = (message: string) => new DomainError('provider_failed', 502, { error: message });

/** The stored form of changes a request carries to the worker (the password sealed, never in the queue). */

@Injectable()
export class SipTrunksService implements OnModuleInit {
  constructor(
    @InjectTenantRepository(PhoneNumber) private readonly numbers: TenantRepository<PhoneNumber>,
    private readonly transactions: Transactions,
    private readonly trunks: SipTrunksRepository,
    private readonly secrets: SecretBox,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly creates: IdempotentCreates,
  ) {}

  /**
   * A create recorded its provisioning request: the retry waits for that request's outcome as the create would
   * have (queueing it again if the dead process had not), and answers the trunk, or the error the create would have.
   */
  onModuleInit(): void {
    this.creates.recoverWith('sip-trunk', async (user, requestId) => {
      const numberId = await this.provision(requestId, SIP_TRUNK_CREATE_FAILED);
      return this.created(await this.read(user, numberId));
    });
  }

  async list(user: AuthenticatedUser): Promise<SipTrunkListResponse> {
    const numbers = await this.numbers.find(user.id, {
      where: { type: 'sip', status: 'active' },
      order: { id: 'DESC' },
    });
    if (numbers.length === 0) return { data: [] };
    const trunks = await this.trunks.findTrunks(
      user.id,
      numbers.map((number) => number.id),
    );
    const byId = new Map(trunks.map((trunk) => [trunk.id, trunk]));
    return {
      data: numbers
        .filter((number) => byId.has(number.id))
        .map((number) => toSipTrunkResponse(number, byId.get(number.id)!)),
    };
  }

  async get(user: AuthenticatedUser, id: number): Promise<SipTrunkEnvelope> {
    return { data: await this.read(user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateSipTrunkRequest): Promise<SipTrunkMessageEnvelope> {
    if (request.sip_trunk_type === 'extension' && request.country_code === undefined) {
      throw ValidationFailed.field(
        'country_code',
        'The country code field is required when sip trunk type is extension.',
      );
    }
    const phoneNumber = this.normaliseNumber(request.sip_trunk_type, request.phone_number, request.country_code);
    const countryCode = request.country_code ?? this.countryOf(request.sip_trunk_type, phoneNumber);
    this.checkSettings(request, request.inbound_authorization_type ?? 'auth');
    // The unique indexes decide between creates racing for one number; nothing is provisioned for the loser.
    const requestId = await whenUnique(
      () =>
        this.transactions.run(async (transaction) => {
          const number = await this.numbers.within(transaction).create(user.id, {
            phoneNumber,
            nickname: request.nickname ?? null,
            countryCode,
            type: 'sip',
            smsCapable: false,
            region: request.sip_address,
            hasActiveSubscription: true,
            status: 'provisioning',
          });
          const sealed = this.secrets.seal(request.sip_password, SecretContexts.sipPassword(number.id));
          const trunks = this.trunks.within(transaction);
          await trunks.insertTrunk({
            id: number.id,
            userId: user.id,
            sipTrunkType: request.sip_trunk_type,
            sipUsername: request.sip_username,
            sipPasswordSealed: sealed,
            sipAddress: request.sip_address,
            sipCallingFormat: request.sip_calling_format ?? '+e164',
            inboundAuthorizationType: request.inbound_authorization_type ?? 'auth',
            allowedInboundIps:
              request.inbound_authorization_type === 'ip' ? (request.allowed_inbound_ips ?? null) : null,
            outboundProxy: request.outbound_proxy ?? false,
          });
          const changes: TrunkChanges = { phone_number: phoneNumber, country_code: countryCode ?? undefined };
          const requestId = await trunks.insertRequest(number.id, 'create', changes);
          await this.creates.record(transaction, 'sip-trunk', requestId);
          return requestId;
        }),
      numberTaken,
    );
    const numberId = await this.provision(requestId, SIP_TRUNK_CREATE_FAILED);
    return this.created(await this.read(user, numberId));
  }

  private created(data: SipTrunkResponse): SipTrunkMessageEnvelope {
    return { message: 'SIP trunk created successfully.', data };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateSipTrunkRequest): Promise<SipTrunkMessageEnvelope> {
    const current = await this.read(user, id);
    this.checkSettings(request, request.inbound_authorization_type ?? current.inbound_authorization_type);
    const changes: TrunkChanges = {};
    if (request.phone_number !== undefined) {
      const number = this.normaliseNumber(
        current.sip_trunk_type as 'number' | 'extension',
        request.phone_number,
        request.country_code ?? current.country_code ?? undefined,
      );
      if (number !== current.phone_number && (await this.trunks.numberHeldByAnother(number, id, user.id)))
        throw numberTaken();
      changes.phone_number = number;
    }
    if (request.nickname !== undefined) changes.nickname = request.nickname;
    if (request.sip_username !== undefined) changes.sip_username = request.sip_username;
    if (request.sip_address !== undefined) changes.sip_address = request.sip_address;
    if (request.sip_calling_format !== undefined) changes.sip_calling_format = request.sip_calling_format;
    if (request.inbound_authorization_type !== undefined)
      changes.inbound_authorization_type = request.inbound_authorization_type;
    if (request.outbound_proxy !== undefined) changes.outbound_proxy = request.outbound_proxy;
    if (request.country_code !== undefined) changes.country_code = request.country_code;
    if (request.allowed_inbound_ips !== undefined && request.allowed_inbound_ips !== null) {
      changes.allowed_inbound_ips = request.allowed_inbound_ips;
    }
    if (request.sip_password !== undefined)
      changes.sip_password_sealed = this.secrets.seal(request.sip_password, SecretContexts.sipPassword(id));
    const requestId = await this.trunks.insertRequest(id, 'update', changes);
    await this.provision(requestId, SIP_TRUNK_UPDATE_FAILED);
    return { message: 'SIP trunk updated successfully.', data: await this.read(user, id) };
  }

  /**
   * Enqueues the request (once: its job id is the request's) and waits for the worker's outcome, at most
   * SIP_PROVISION_TIMEOUT_SECONDS; answers the trunk's id. A create that did not come to be leaves no number behind:
   * the worker removes it when the provider refused, this when the request is abandoned.
   */
  private async provision(requestId: number, failure: string): Promise<number> {
    if ((await this.trunks.outcome(requestId))?.status === 'pending') {
      try {
        await this.jobs.enqueue(Jobs.provisionSipTrunk, { requestId });
      } catch {
        await this.abandon(requestId);
        // The spec's answer for a change that could not be applied, with the status of a queue that did not answer.
        throw new DomainError('enqueue_failed', 503, { error: failure });
      }
    }
    const deadline = Date.now() + this.config.sipProvisionTimeoutSeconds * 1000;
    for (;;) {
      const row = await this.trunks.outcome(requestId);
      if (row?.status === 'done') {
        // Its trunk deleted since (a retry of a create long done).
        if (row.phone_number_id === null) throw Errors.sipTrunkNotFound();
        return row.phone_number_id;
      }
      if (row?.status === 'failed') {
        if (row.kind === 'create') await this.trunks.removeUnprovisioned(row.phone_number_id);
        // Another trunk took the number between this request's check and the worker: the caller's input, not the provider.
        if (row.error === PHONE_NUMBER_TAKEN) throw numberTaken();
        throw providerFailed(failure);
      }
      if (row?.status !== 'pending') throw providerFailed(failure);
      if (Date.now() > deadline) {
        // Give up, unless the worker settled it this very moment: the row decides, under its lock.
        if (await this.abandon(requestId)) throw providerFailed(failure);
        continue;
      }
      await sleep(POLL_MS);
    }
  }

  /** Settles the request as abandoned, unless the worker settled it first; a create's number goes with it. */
  private abandon(requestId: number): Promise<boolean> {
    return this.transactions.run(async (transaction) => {
      const trunks = this.trunks.within(transaction);
      const abandoned = await trunks.abandon(requestId);
      if (abandoned?.kind === 'create') await trunks.removeUnprovisioned(abandoned.phone_number_id);
      return abandoned !== undefined;
    });
  }

  private async read(user: AuthenticatedUser, id: number) {
    const number = await this.numbers.findOneWhere(user.id, { id, type: 'sip', status: 'active' });
    const trunk = number && (await this.trunks.findTrunk(user.id, id));
    if (!number || !trunk) throw Errors.sipTrunkNotFound();
    return toSipTrunkResponse(number, trunk);
  }

  /** Numbers are stored in E.164, the form carriers put in the INVITE, so inbound calls match. */
  private normaliseNumber(type: 'number' | 'extension', value: string, country?: string): string {
    if (type === 'extension') return value;
    const e164 = toE164(value, country);
    if (!e164) throw ValidationFailed.field('phone_number', INVALID_PHONE_NUMBER('phone number'));
    return e164;
  }

  private countryOf(type: 'number' | 'extension', phoneNumber: string): string | null {
    if (type === 'extension') return null;
    return countryOfNumber(phoneNumber) ?? null;
  }

  /**
   * What the DTO cannot check alone. `authorization` is the inbound authorization the trunk will have: allowed
   * addresses belong to `ip` only, and a list sent for a trunk that authenticates by credentials would be stored
   * unused and never shown, so it is refused (Laravel's `prohibited_unless`).
   */
  private checkSettings(request: UpdateSipTrunkRequest, authorization: string): void {
    const errors: Record<string, string[]> = {};
    if (request.allowed_inbound_ips != null && authorization !== 'ip') {
      errors.allowed_inbound_ips = [
        'The allowed inbound ips field is prohibited unless inbound authorization type is in ip.',
      ];
    }
    request.allowed_inbound_ips?.forEach((address, index) => {
      const attribute = `allowed_inbound_ips.${index}`;
      if (!isIpOrCidr(address)) {
        errors[attribute] = [`The ${humaniseAttribute(attribute)} field must be a valid IP address or CIDR range.`];
      }
    });
    if (request.country_code !== undefined && !isSupportedCountry(request.country_code)) {
      errors.country_code = ['The selected country code is invalid.'];
    }
    if (request.outbound_proxy && !this.config.sipOutboundProxyAddress) {
      errors.outbound_proxy = ['The outbound proxy is not available on this deployment.'];
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  }
}
