import type { OnModuleInit } from '@nestjs/common';
import { type DataSource } from 'typeorm';
import {
  type CreateNamedColourRequest,
  type DomainError,
  type MessageResponse,
  type NamedColourMessageEnvelope,
  type NamedColourResponse,
  type NamedColourRow,
  type PageQuery,
  type SlimPage,
  slimPage,
  toNamedColourResponse,
  type UpdateNamedColourRequest,
  ValidationFailed,
} from '@app/contracts';
import { type ReadReplicas, whenUnique } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';
import type { IdempotentCreates } from '../idempotency/idempotent-creates';

const nameTaken = () => ValidationFailed.field('name', 'The name has already been taken.');

/** How a folder or a label is told apart: its table, how its assistants are found, and its words. */
export interface NamedColourKind {
  table: 'folders' | 'labels';
  /** What a create makes, for the Idempotency-Key's record. */
  created: 'folder' | 'label';
  /** SQL counting the assistants of row `item` (aliased `item` in the queries). */
  assistantsCount: string;
  noun: string;
  notFound: () => DomainError;
}

/**
 * Folders and labels: a name unique per account whatever its letter case, an optional colour, and the number of
 * assistants using it, counted in the same query as the rows (never a query per row).
 */
export class NamedColours implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reads: ReadReplicas,
    private readonly creates: IdempotentCreates,
    private readonly kind: NamedColourKind,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith(this.kind.created, async (user, id) => {
      const [row] = (await this.dataSource.query(
        `SELECT item.id, item.name, item.color, ${this.kind.assistantsCount} AS assistants_count
           FROM ${this.kind.table} item WHERE item.id = $1 AND item.user_id = $2`,
        [id, user.id],
      )) as NamedColourRow[];
      if (!row) throw this.kind.notFound();
      return this.created(row);
    });
  }

  async list(user: AuthenticatedUser, query: PageQuery): Promise<SlimPage<NamedColourResponse>> {
    const [rows, [{ total }]] = await Promise.all([
      this.reads.query(
        user.id,
        `SELECT item.id, item.name, item.color, ${this.kind.assistantsCount} AS assistants_count
           FROM ${this.kind.table} item
          WHERE item.user_id = $1
          ORDER BY item.id DESC
          LIMIT $2 OFFSET $3`,
        [user.id, query.per_page, (query.page - 1) * query.per_page],
      ),
      this.reads.query(user.id, `SELECT count(*)::int AS total FROM ${this.kind.table} WHERE user_id = $1`, [user.id]),
    ]);
    return slimPage((rows as NamedColourRow[]).map(toNamedColourResponse), total, {
      page: query.page,
      perPage: query.per_page,
    });
  }

  async create(user: AuthenticatedUser, request: CreateNamedColourRequest): Promise<NamedColourMessageEnvelope> {
    const row = await whenUnique(
      () =>
        this.dataSource.transaction(async (manager) => {
          const [inserted] = (await manager.query(
            `INSERT INTO ${this.kind.table} (user_id, name, color) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING
             RETURNING id, name, color, 0 AS assistants_count`,
            [user.id, request.name, request.color ?? null],
          )) as NamedColourRow[];
          if (inserted) await this.creates.record(manager, this.kind.created, inserted.id);
          return inserted;
        }),
      nameTaken,
    );
    if (!row) throw nameTaken();
    return this.created(row);
  }

  private created(row: NamedColourRow): NamedColourMessageEnvelope {
    return { message: `${this.kind.noun} created successfully.`, data: toNamedColourResponse(row) };
  }

  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    const [rows] = (await whenUnique(
      () =>
        this.dataSource.query(
          `UPDATE ${this.kind.table} item
            SET name = CASE WHEN $3::boolean THEN $4 ELSE item.name END,
                color = CASE WHEN $5::boolean THEN $6 ELSE item.color END,
                updated_at = now()
          WHERE item.id = $1 AND item.user_id = $2
          RETURNING item.id, item.name, item.color, ${this.kind.assistantsCount} AS assistants_count`,
          [
            id,
            user.id,
            request.name !== undefined,
            request.name ?? null,
            request.color !== undefined,
            request.color ?? null,
          ],
        ),
      nameTaken,
    )) as [NamedColourRow[], number];
    if (rows.length === 0) throw this.kind.notFound();
    return { message: `${this.kind.noun} updated successfully.`, data: toNamedColourResponse(rows[0]) };
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    const [, deleted] = (await this.dataSource.query(`DELETE FROM ${this.kind.table} WHERE id = $1 AND user_id = $2`, [
      id,
      user.id,
    ])) as [unknown, number];
    if (deleted === 0) throw this.kind.notFound();
    return { message: `${this.kind.noun} deleted successfully.` };
  }
}
