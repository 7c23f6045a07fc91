import type { NamedColourRow } from '@app/contracts';
import { SqlRepository } from './sql-repository';

/** A named-colour table, and how the assistants using one of its rows (aliased `item`) are counted. */
export interface NamedColourTable {
  name: 'folders' | 'labels';
  assistantsCount: string;
}

/**
 * Folders and labels: a name unique per account whatever its letter case (a unique index decides between creates
 * racing for one), an optional colour, and the number of assistants using it, counted in the same statement as the
 * rows (never a statement per row). Every statement takes the owner.
 */
export abstract class NamedColoursRepository extends SqlRepository {
  protected abstract readonly table: NamedColourTable;

  private get columns(): string {
    return `item.id, item.name, item.color, ${this.table.assistantsCount} AS assistants_count`;
  }

  async find(ownerId: number, id: number): Promise<NamedColourRow | undefined> {
    const [row] = (await this.manager.query(
      `SELECT ${this.columns} FROM ${this.table.name} item WHERE item.id = $1 AND item.user_id = $2`,
      [id, ownerId],
    )) as NamedColourRow[];
    return row;
  }

  /** A page, newest first, and the owner's total. */
  async page(ownerId: number, limit: number, offset: number): Promise<[NamedColourRow[], number]> {
    const [rows, [{ total }]] = (await Promise.all([
      this.reads.query(
        ownerId,
        `SELECT ${this.columns} FROM ${this.table.name} item
          WHERE item.user_id = $1
          ORDER BY item.id DESC
          LIMIT $2 OFFSET $3`,
        [ownerId, limit, offset],
      ),
      this.reads.query(ownerId, `SELECT count(*)::int AS total FROM ${this.table.name} WHERE user_id = $1`, [ownerId]),
    ])) as [NamedColourRow[], { total: number }[]];
    return [rows, total];
  }

  /** The new row, or none when the owner has one of that name. */
  async insert(ownerId: number, name: string, color: string | null): Promise<NamedColourRow | undefined> {
    const [row] = (await this.manager.query(
      `INSERT INTO ${this.table.name} (user_id, name, color) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING
       RETURNING id, name, color, 0 AS assistants_count`,
      [ownerId, name, color],
    )) as NamedColourRow[];
    return row;
  }

  /** Renames or recolours (what is given); none when the owner has no such row. */
  async update(
    ownerId: number,
    id: number,
    changes: { name?: string; color?: string | null },
  ): Promise<NamedColourRow | undefined> {
    const [rows] = (await this.manager.query(
      `UPDATE ${this.table.name} item
          SET name = CASE WHEN $3::boolean THEN $4 ELSE item.name END,
              color = CASE WHEN $5::boolean THEN $6 ELSE item.color END,
              updated_at = now()
        WHERE item.id = $1 AND item.user_id = $2
        RETURNING ${this.columns}`,
      [
        id,
        ownerId,
        changes.name !== undefined,
        changes.name ?? null,
        changes.color !== undefined,
        changes.color ?? null,
      ],
    )) as [NamedColourRow[], number];
    return rows[0];
  }

  async delete(ownerId: number, id: number): Promise<boolean> {
    return (await this.changed(`DELETE FROM ${this.table.name} WHERE id = $1 AND user_id = $2`, [id, ownerId])) > 0;
  }
}
