import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { OwnedEntity } from './owned.entity';

export const PHONE_NUMBER_TYPES = ['normal', 'sip', 'caller_id'] as const;
export type PhoneNumberType = (typeof PHONE_NUMBER_TYPES)[number];

/** A number of the account: bought from a carrier (assigned by operations) or a SIP trunk's (type `sip`). */
@Entity({ name: 'phone_numbers' })
export class PhoneNumber extends OwnedEntity {
  @Column({ name: 'phone_number', type: 'varchar', length: 32 })
  phoneNumber: string;

  @Column({ type: 'varchar', length: 50, nullable: true })
  nickname: string | null;

  @Column({ name: 'country_code', type: 'varchar', length: 2, nullable: true })
  countryCode: string | null;

  @Column({ type: 'varchar', length: 16 })
  type: PhoneNumberType;

  @Column({ name: 'sms_capable', type: 'boolean', default: false })
  smsCapable: boolean;

  @Column({ type: 'varchar', length: 255, nullable: true })
  region: string | null;

  @Column({ name: 'has_active_subscription', type: 'boolean', default: true })
  hasActiveSubscription: boolean;

  /**
   * The provider's outbound trunk an operator named for a number bought from a carrier; calls are placed from the
   * number through it. Null for a SIP trunk's number (its own is on `sip_trunks`) and for a number nobody gave one.
   */
  @Column({ name: 'outbound_trunk_id', type: 'varchar', length: 64, nullable: true })
  outboundTrunkId: string | null;

  /** The owner's server asked at ring time which assistant takes an inbound call to the number (null: the account's). */
  @Column({ name: 'server_url', type: 'varchar', length: 2048, nullable: true })
  serverUrl: string | null;

  @Column({ name: 'server_timeout_ms', type: 'integer', default: 2000 })
  serverTimeoutMs: number;

  /** Signs the hook's requests; made when `server_url` is first set, sealed under the number's id. */
  @Column({ name: 'server_secret_sealed', type: 'text', nullable: true })
  serverSecretSealed: string | null;

  /** `provisioning` while a new SIP trunk is being set up at the provider; hidden from the account until `active`. */
  @Column({ type: 'varchar', length: 16, default: 'active' })
  status: 'provisioning' | 'active';

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
