import type { OnModuleInit } from '@nestjs/common';
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
  pageOffset,
} from '@app/contracts';
import { type NamedColoursRepository, type Transactions, whenUnique } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';
import type { IdempotentCreates } from '../idempotency/idempotent-creates';

const nameTaken = () => ValidationFailed.field('name', 'The name has already been taken.');

/** How a folder or a label is told apart in answers: its words, and what a create makes. */
export interface NamedColourKind {
  /** What a create makes, for the Idempotency-Key's record. */
  created: 'folder' | 'label';
  noun: string;
  notFound: () => DomainError;
}

/** Folders and labels: the same routes and shapes over their own tables (see `NamedColoursRepository`). */
export class NamedColours implements OnModuleInit {
  constructor(
    private readonly items: NamedColoursRepository,
    private readonly transactions: Transactions,
    private readonly creates: IdempotentCreates,
    private readonly kind: NamedColourKind,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith(this.kind.created, async (user, id) => this.created(await this.find(user, id)));
  }

  async list(user: AuthenticatedUser, query: PageQuery): Promise<SlimPage<NamedColourResponse>> {
    const [rows, total] = await this.items.page(user.id, query.per_page, pageOffset(query));
    return slimPage(rows.map(toNamedColourResponse), total, { page: query.page, perPage: query.per_page });
  }

  async create(user: AuthenticatedUser, request: CreateNamedColourRequest): Promise<NamedColourMessageEnvelope> {
    const row = await whenUnique(
      () =>
        this.transactions.run(async (transaction) => {
          const inserted = await this.items.within(transaction).insert(user.id, request.name, request.color ?? null);
          if (inserted) await this.creates.record(transaction, this.kind.created, inserted.id);
          return inserted;
        }),
      nameTaken,
    );
    if (!row) throw nameTaken();
    return this.created(row);
  }

  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    const row = await whenUnique(() => this.items.update(user.id, id, request), nameTaken);
    if (!row) throw this.kind.notFound();
    return { message: `${this.kind.noun} updated successfully.`, data: toNamedColourResponse(row) };
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.items.delete(user.id, id))) throw this.kind.notFound();
    return { message: `${this.kind.noun} deleted successfully.` };
  }

  private async find(user: AuthenticatedUser, id: number): Promise<NamedColourRow> {
    const row = await this.items.find(user.id, id);
    if (!row) throw this.kind.notFound();
    return row;
  }

  private created(row: NamedColourRow): NamedColourMessageEnvelope {
    return { message: `${this.kind.noun} created successfully.`, data: toNamedColourResponse(row) };
  }
}
