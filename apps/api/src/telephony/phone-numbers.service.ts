import { Injectable } from '@nestjs/common';
import {
  Errors,
  MessageResponse,
  PhoneNumberListResponse,
  PhoneNumberMessageEnvelope,
  type PhoneNumberResponse,
  toPhoneNumberResponse,
  UpdatePhoneNumberRequest,
} from '@app/contracts';
import { newWebhookSecret, SecretBox, SecretContexts } from '@app/crypto';
import {
  InjectTenantRepository,
  PhoneNumber,
  SipTrunksRepository,
  TenantRepository,
  Transactions,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';

@Injectable()
export class PhoneNumbersService {
  constructor(
    @InjectTenantRepository(PhoneNumber) private readonly numbers: TenantRepository<PhoneNumber>,
    private readonly transactions: Transactions,
    private readonly trunks: SipTrunksRepository,
    private readonly jobs: JobQueue,
    private readonly secrets: SecretBox,
  ) {}

  /** Every number of the account, SIP trunks included (not those still being set up), newest first like every list. */
  async all(user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    const numbers = await this.numbers.find(user.id, { where: { status: 'active' }, order: { id: 'DESC' } });
    return { data: numbers.map((number) => this.response(number)) };
  }

  /** The legacy list: numbers that can send SMS and have an active subscription, newest first. */
  async legacy(user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    const numbers = await this.numbers.find(user.id, {
      where: { status: 'active', smsCapable: true, hasActiveSubscription: true },
      order: { id: 'DESC' },
    });
    return { data: numbers.map((number) => this.response(number)) };
  }

  /**
   * Sets the number's own ring-time hook (`server_url`, `server_timeout_ms`; a field left out stays, a null URL
   * clears it and the account's default applies again). Its signing secret is made when a URL is first set, and
   * kept (rotated only on request).
   */
  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdatePhoneNumberRequest,
  ): Promise<PhoneNumberMessageEnvelope> {
    const updated = await this.transactions.run(async (transaction) => {
      const numbers = this.numbers.within(transaction);
      const number = await numbers.findOneForUpdate(user.id, id);
      if (!number || number.status !== 'active') throw Errors.phoneNumberNotFound();
      if (request.server_url !== undefined) number.serverUrl = request.server_url;
      if (request.server_timeout_ms !== undefined) number.serverTimeoutMs = request.server_timeout_ms;
      if (number.serverUrl && !number.serverSecretSealed) number.serverSecretSealed = this.sealedNewSecret(id);
      return numbers.saveChanges(user.id, number);
    });
    return { message: 'Phone number updated successfully.', data: this.response(updated) };
  }

  /** A new signing secret for the number's hook; the old one signs nothing from now on. */
  async rotateServerSecret(user: AuthenticatedUser, id: number): Promise<PhoneNumberMessageEnvelope> {
    const number = await this.numbers.findOneWhere(user.id, { id, status: 'active' });
    if (!number) throw Errors.phoneNumberNotFound();
    number.serverSecretSealed = this.sealedNewSecret(id);
    await this.numbers.update(user.id, id, { serverSecretSealed: number.serverSecretSealed, updatedAt: new Date() });
    return { message: 'Server secret rotated successfully.', data: this.response(number) };
  }

  private sealedNewSecret(id: number): string {
    return this.secrets.seal(newWebhookSecret(), SecretContexts.phoneNumberServerSecret(id));
  }

  /** The number as its owner reads it, the hook's secret opened. */
  private response(number: PhoneNumber): PhoneNumberResponse {
    const secret = number.serverSecretSealed
      ? this.secrets.open(number.serverSecretSealed, SecretContexts.phoneNumberServerSecret(number.id))
      : null;
    return toPhoneNumberResponse(number, secret);
  }

  /**
   * Releases a number. A SIP trunk's provider trunks are recorded for deletion in the same transaction (waiting
   * for any provisioning of it in flight), and the worker deletes them, retrying until they are gone.
   */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    const hadTrunks = await this.transactions.run(async (transaction) => {
      const trunks = this.trunks.within(transaction);
      const provider = await trunks.lockProviderTrunks(user.id, id);
      if (!(await this.numbers.within(transaction).deleteWhere(user.id, { id, status: 'active' }))) {
        throw Errors.phoneNumberNotFound();
      }
      if (!provider) return false;
      await trunks.recordCleanups(provider);
      return true;
    });
    // The repeatable clean-up would get to them within a minute; this gets to them now.
    if (hadTrunks) await this.jobs.enqueue(Jobs.cleanUpProviderTrunks, {}).catch(() => undefined);
    return { message: 'Phone number deleted successfully.' };
  }
}
