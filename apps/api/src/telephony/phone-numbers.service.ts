import { Injectable } from '@nestjs/common';
import { Errors, MessageResponse, PhoneNumberListResponse, toPhoneNumberResponse } from '@app/contracts';
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
  ) {}

  /** Every number of the account, SIP trunks included (not those still being set up), newest first like every list. */
  async all(user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    const numbers = await this.numbers.find(user.id, { where: { status: 'active' }, order: { id: 'DESC' } });
    return { data: numbers.map(toPhoneNumberResponse) };
  }

  /** The legacy list: numbers that can send SMS and have an active subscription, newest first. */
  async legacy(user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    const numbers = await this.numbers.find(user.id, {
      where: { status: 'active', smsCapable: true, hasActiveSubscription: true },
      order: { id: 'DESC' },
    });
    return { data: numbers.map(toPhoneNumberResponse) };
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
