import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Reference data shared by every account, seeded by a migration. */
@Entity({ name: 'languages' })
export class Language {
  @PrimaryGeneratedColumn('identity', { generatedIdentity: 'ALWAYS' })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** ISO 639-1 code. */
  @Column({ name: 'iso_2', type: 'char', length: 2 })
  iso2: string;
}
