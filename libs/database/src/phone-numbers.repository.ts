import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A number an account bought from a carrier, as an operator gives it to the account. */
export interface AssignedPhoneNumber {
  phoneNumber: string;
  nickname: string | null;
  countryCode: string;
  type: string;
  smsCapable: boolean;
  region: string | null;
  hasActiveSubscription: boolean;
  /** The provider's outbound trunk calls from the number go through (the operator's), if it has one. */
  outboundTrunkId: string | null;
}

/**
 * Phone numbers an operator assigns (the API's own reads and writes of an account's numbers go through
 * `TenantRepository<PhoneNumber>`, its SIP trunks' through `SipTrunksRepository`).
 */
@Injectable()
export class PhoneNumbersRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * Gives the owner the number and answers its id. The unique index refuses (as a unique violation) a number some
   * account holds already, as a trunk or as an assigned number.
   */
  async assign(ownerId: number, number: AssignedPhoneNumber): Promise<number> {
    const [row] = (await this.manager.query(
      `INSERT INTO phone_numbers (user_id, phone_number, nickname, country_code, type, sms_capable, region,
                                  has_active_subscription, outbound_trunk_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [
        ownerId,
        number.phoneNumber,
        number.nickname,
        number.countryCode,
        number.type,
        number.smsCapable,
        number.region,
        number.hasActiveSubscription,
        number.outboundTrunkId,
      ],
    )) as { id: number }[];
    return row.id;
  }

  /**
   * Sets (or, with null, clears) the outbound trunk of the owner's assigned number; false when the owner holds no
   * such number. A SIP trunk's number is left alone: its outbound trunk is the one the service provisioned for it.
   */
  async setOutboundTrunk(ownerId: number, phoneNumber: string, trunkId: string | null): Promise<boolean> {
    return (
      (await this.changed(
        `UPDATE phone_numbers SET outbound_trunk_id = $3, updated_at = now()
          WHERE user_id = $1 AND phone_number = $2 AND type <> 'sip'`,
        [ownerId, phoneNumber, trunkId],
      )) > 0
    );
  }
}
