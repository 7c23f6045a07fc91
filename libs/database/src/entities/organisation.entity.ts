import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { OwnedEntity } from './owned.entity';

/** Folders and labels have the same shape: a name unique per account (any letter case) and a colour. */
abstract class NamedColour extends OwnedEntity {
  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16, nullable: true })
  color: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** An assistant is in at most one folder. */
@Entity({ name: 'folders' })
export class Folder extends NamedColour {}

/** An assistant can carry many labels. */
@Entity({ name: 'labels' })
export class Label extends NamedColour {}
