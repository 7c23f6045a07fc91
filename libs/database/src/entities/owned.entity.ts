import { Column, PrimaryGeneratedColumn } from 'typeorm';

/** Columns of every row that belongs to one account; such rows are reached through TenantRepository. */
export abstract class OwnedEntity {
  @PrimaryGeneratedColumn('identity', { generatedIdentity: 'ALWAYS' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;
}
