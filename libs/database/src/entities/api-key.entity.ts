import { Column, CreateDateColumn, Entity } from 'typeorm';
import { OwnedEntity } from './owned.entity';

@Entity({ name: 'api_keys' })
export class ApiKey extends OwnedEntity {
  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** SHA-256 (hex) of the token; the token itself is never stored. */
  @Column({ name: 'token_hash', type: 'char', length: 64, select: false })
  tokenHash: string;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
