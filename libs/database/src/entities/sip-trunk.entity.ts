import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The SIP settings of a phone number of type `sip`; its id is the number's id. */
@Entity({ name: 'sip_trunks' })
export class SipTrunk {
  @PrimaryColumn({ name: 'phone_number_id', type: 'integer' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @Column({ name: 'sip_trunk_type', type: 'varchar', length: 16 })
  sipTrunkType: 'number' | 'extension';

  @Column({ name: 'sip_username', type: 'varchar', length: 128 })
  sipUsername: string;

  /** Sealed with SecretBox, context `sip-trunk:<id>:password`. */
  @Column({ name: 'sip_password_sealed', type: 'text' })
  sipPasswordSealed: string;

  @Column({ name: 'sip_address', type: 'varchar', length: 253 })
  sipAddress: string;

  @Column({ name: 'sip_calling_format', type: 'varchar', length: 16 })
  sipCallingFormat: string;

  @Column({ name: 'inbound_authorization_type', type: 'varchar', length: 8 })
  inboundAuthorizationType: 'auth' | 'ip';

  @Column({ name: 'allowed_inbound_ips', type: 'jsonb', nullable: true })
  allowedInboundIps: string[] | null;

  @Column({ name: 'outbound_proxy', type: 'boolean' })
  outboundProxy: boolean;

  @Column({ name: 'inbound_trunk_id', type: 'varchar', length: 64, nullable: true })
  inboundTrunkId: string | null;

  @Column({ name: 'inbound_dispatch_rule_id', type: 'varchar', length: 64, nullable: true })
  inboundDispatchRuleId: string | null;

  @Column({ name: 'outbound_trunk_id', type: 'varchar', length: 64, nullable: true })
  outboundTrunkId: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
