import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import type { StoredToolParameter } from '@app/contracts';
import { OwnedEntity } from './owned.entity';

/** A header as stored: its value sealed with SecretBox (context `tool:<id>:header`). */
export interface SealedToolHeader {
  name: string;
  sealedValue: string;
}

export interface StoredToolStaticField {
  key: string;
  value: string;
}

/** A mid-call HTTP tool. Lists are small and always read whole, so they live in jsonb columns. */
@Entity({ name: 'tools' })
export class Tool extends OwnedEntity {
  @Column({ type: 'varchar', length: 64 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  description: string;

  @Column({ type: 'varchar', length: 2048 })
  endpoint: string;

  @Column({ type: 'varchar', length: 8 })
  method: string;

  @Column({ name: 'body_format', type: 'varchar', length: 8 })
  bodyFormat: string;

  @Column({ name: 'timeout_seconds', type: 'integer' })
  timeoutSeconds: number;

  @Column({ type: 'jsonb' })
  headers: SealedToolHeader[];

  @Column({ name: 'static_fields', type: 'jsonb' })
  staticFields: StoredToolStaticField[];

  @Column({ type: 'jsonb' })
  schema: StoredToolParameter[];

  @Column({ name: 'automation_flow_id', type: 'varchar', length: 255, nullable: true })
  automationFlowId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
