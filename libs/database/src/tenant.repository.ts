import { Inject } from '@nestjs/common';
import type { Provider } from '@nestjs/common';
import { DataSource, FindOperator, type FindOptionsOrder, type FindOptionsWhere, type Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { queryRows } from './pool-query';
import { ReadReplicas } from './read-replicas';
import { managerOf, type Transaction } from './transactions';

/** An entity that belongs to one account. */
export interface Owned {
  id: number;
  userId: number;
}

export interface OwnedQuery<T> {
  where?: FindOptionsWhere<T>;
  order?: FindOptionsOrder<T>;
  skip?: number;
  take?: number;
}

/** A filter the lean path takes: a column equal to a value, or (an array) to any of them. */
type PlainFilter = [column: ColumnMetadata, value: string | number | boolean | (string | number)[]];

/**
 * Repository for account data. Every method takes the owner id first and adds it to the query, and the raw
 * TypeORM repository is not exposed, so a query that forgets the account cannot be written through it.
 * A row of another account therefore behaves exactly like a missing one.
 *
 * Reads go where `ReadReplicas` sends the account's reads (a replica fresh enough for it, or the primary); writes,
 * locking reads and everything inside a transaction (`within`) use the primary.
 */
export class TenantRepository<T extends Owned> {
  /** Statements of the lean path, by shape (what, which columns are filtered, which order). */
  private readonly statements = new Map<string, string>();

  constructor(
    private readonly repository: Repository<T>,
    private readonly replicas?: ReadReplicas,
  ) {}

  /** Runs a read with this repository on the server the account's reads use. */
  private reading<R>(ownerId: number, work: (repository: Repository<T>) => Promise<R>): Promise<R> {
    if (!this.replicas) return work(this.repository);
    return this.replicas.read(ownerId, (dataSource) =>
      work(
        dataSource === this.repository.manager.connection
          ? this.repository
          : dataSource.getRepository<T>(this.repository.target),
      ),
    );
  }

  private scoped(ownerId: number, where: FindOptionsWhere<T> = {}): FindOptionsWhere<T> {
    return { ...where, userId: ownerId } as FindOptionsWhere<T>;
  }

  /** The same repository in a transaction `Transactions` opened. */
  within(transaction: Transaction): TenantRepository<T> {
    return new TenantRepository(managerOf(transaction).getRepository(this.repository.target));
  }

  findOne(ownerId: number, id: number): Promise<T | null> {
    return this.reading(ownerId, (repository) =>
      repository.findOne({ where: this.scoped(ownerId, { id } as FindOptionsWhere<T>) }),
    );
  }

  /**
   * The row, locked against concurrent writes and deletes until the transaction ends (through `within`
   * only), for a read-then-write of it; rows that merely reference it are not held up.
   */
  findOneForUpdate(ownerId: number, id: number): Promise<T | null> {
    return this.repository.findOne({
      where: this.scoped(ownerId, { id } as FindOptionsWhere<T>),
      lock: { mode: 'for_no_key_update' },
    });
  }

  findOneWhere(ownerId: number, where: FindOptionsWhere<T>): Promise<T | null> {
    return this.reading(ownerId, (repository) => repository.findOne({ where: this.scoped(ownerId, where) }));
  }

  find(ownerId: number, query: OwnedQuery<T> = {}): Promise<T[]> {
    return this.reading(ownerId, (repository) => {
      const filters = this.plainFilters(repository, query.where);
      const order = query.order === undefined ? '' : orderById(query.order);
      return filters && order !== undefined && query.skip === undefined && query.take === undefined
        ? this.leanSelect(repository, ownerId, filters, order)
        : repository.find({ ...query, where: this.scoped(ownerId, query.where) });
    });
  }

  /** Every row of the owner, newest first, with the columns `find` selects. */
  findAllNewestFirst(ownerId: number): Promise<T[]> {
    return this.find(ownerId, { order: { id: 'DESC' } as FindOptionsOrder<T> });
  }

  exists(ownerId: number, where: FindOptionsWhere<T>): Promise<boolean> {
    return this.reading(ownerId, async (repository) => {
      const filters = this.plainFilters(repository, where);
      if (!filters) return repository.exists({ where: this.scoped(ownerId, where) });
      const sql = this.statement(repository, 'exists', filters, '', () => 'SELECT 1 AS found');
      return (await this.run(repository, sql, ownerId, filters)).length > 0;
    });
  }

  /**
   * The lists and checks read on every request (`find` with equality filters and at most an order by id, `exists`)
   * take a lean path: the statement is built once per shape from the entity metadata, runs on the pool outside a
   * transaction, and rows are hydrated column by column, without the query builder and result transformer TypeORM
   * runs on every call (most of a short list's cost in TypeORM; docs/benchmarks.md, section 8). Anything else, or an
   * entity with relations, embedded columns or soft deletes, goes through TypeORM as before.
   */
  private plainFilters(repository: Repository<T>, where: FindOptionsWhere<T> = {}): PlainFilter[] | undefined {
    const { metadata } = repository;
    if (metadata.relations.length > 0 || metadata.embeddeds.length > 0 || metadata.deleteDateColumn) return undefined;
    const filters: PlainFilter[] = [];
    for (const [property, value] of Object.entries(where)) {
      const column = metadata.findColumnWithPropertyName(property);
      if (!column || column.transformer || property === 'userId') return undefined;
      if (isPlain(value)) filters.push([column, value]);
      else if (value instanceof FindOperator && value.type === 'in' && Array.isArray(value.value)) {
        if (!(value.value as unknown[]).every((item) => typeof item === 'number' || typeof item === 'string'))
          return undefined;
        filters.push([column, value.value as (string | number)[]]);
      } else return undefined;
    }
    return filters;
  }

  private async leanSelect(
    repository: Repository<T>,
    ownerId: number,
    filters: PlainFilter[],
    order: string,
  ): Promise<T[]> {
    const { metadata, manager } = repository;
    const columns = metadata.columns.filter((column) => column.isSelect);
    const sql = this.statement(
      repository,
      'select',
      filters,
      order,
      () => `SELECT ${columns.map((column) => `"${column.databaseName}"`).join(', ')}`,
    );
    const rows = await this.run(repository, sql, ownerId, filters);
    const driver = manager.connection.driver;
    return rows.map((row) => {
      const entity = metadata.create() as T;
      for (const column of columns) {
        column.setEntityValue(entity, driver.prepareHydratedValue(row[column.databaseName], column));
      }
      return entity;
    });
  }

  private statement(
    repository: Repository<T>,
    kind: 'select' | 'exists',
    filters: PlainFilter[],
    order: string,
    select: () => string,
  ): string {
    const shape = `${kind} ${filters.map(([column, value]) => `${column.databaseName}${Array.isArray(value) ? '[]' : ''}`)} ${order}`;
    let sql = this.statements.get(shape);
    if (!sql) {
      const { metadata } = repository;
      const conditions = [
        `"${metadata.findColumnWithPropertyName('userId')!.databaseName}" = $1`,
        ...filters.map(([column, value], index) =>
          Array.isArray(value)
            ? `"${column.databaseName}" = ANY($${index + 2})`
            : `"${column.databaseName}" = $${index + 2}`,
        ),
      ];
      const orderBy = order && ` ORDER BY "${metadata.findColumnWithPropertyName('id')!.databaseName}" ${order}`;
      sql = `${select()} FROM "${metadata.tableName}" WHERE ${conditions.join(' AND ')}${orderBy}${kind === 'exists' ? ' LIMIT 1' : ''}`;
      this.statements.set(shape, sql);
    }
    return sql;
  }

  /** Inside a transaction on its connection; outside one, straight to the pool. */
  private run(
    repository: Repository<T>,
    sql: string,
    ownerId: number,
    filters: PlainFilter[],
  ): Promise<Record<string, unknown>[]> {
    const { manager } = repository;
    const values = [ownerId, ...filters.map(([, value]) => value)];
    return queryRows(manager, sql, values);
  }

  findAndCount(ownerId: number, query: OwnedQuery<T> = {}): Promise<[T[], number]> {
    return this.reading(ownerId, (repository) =>
      repository.findAndCount({ ...query, where: this.scoped(ownerId, query.where) }),
    );
  }

  count(ownerId: number, where?: FindOptionsWhere<T>): Promise<number> {
    return this.reading(ownerId, (repository) => repository.count({ where: this.scoped(ownerId, where) }));
  }

  async create(ownerId: number, values: Omit<Partial<T>, 'id' | 'userId'>): Promise<T> {
    const entity = this.repository.create({ ...values, userId: ownerId } as T);
    return this.repository.save(entity);
  }

  /**
   * Writes the changes made to a row this repository read (TypeORM's `save`: the columns that differ from what it
   * read), refusing a row of another owner.
   */
  async saveChanges(ownerId: number, entity: T): Promise<T> {
    if (entity.userId !== ownerId) throw new Error("saveChanges: the row is not this owner's");
    return this.repository.save(entity);
  }

  /** Returns false when no row of this owner has that id. */
  async update(ownerId: number, id: number, values: QueryDeepPartialEntity<T>): Promise<boolean> {
    const result = await this.repository.update(this.scoped(ownerId, { id } as FindOptionsWhere<T>), values);
    return (result.affected ?? 0) > 0;
  }

  /** Returns false when no row of this owner has that id. */
  delete(ownerId: number, id: number): Promise<boolean> {
    return this.deleteWhere(ownerId, { id } as FindOptionsWhere<T>);
  }

  /** Returns false when no row of this owner matched. */
  async deleteWhere(ownerId: number, where: FindOptionsWhere<T>): Promise<boolean> {
    const result = await this.repository.delete(this.scoped(ownerId, where));
    return (result.affected ?? 0) > 0;
  }
}

function isPlain(value: unknown): value is string | number | boolean {
  return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';
}

/** `ASC` or `DESC` for an order by id alone (`{ id: 'DESC' }`), else undefined. */
function orderById(order: object): string | undefined {
  const entries = Object.entries(order);
  if (entries.length !== 1 || entries[0][0] !== 'id') return undefined;
  const direction = String(entries[0][1]).toUpperCase();
  return direction === 'ASC' || direction === 'DESC' ? direction : undefined;
}

const tokenFor = (entity: abstract new (...args: never[]) => unknown) => `TenantRepository<${entity.name}>`;

/** Injects the TenantRepository of an entity registered with `tenantRepositoryProvider`. */
export const InjectTenantRepository = (entity: abstract new (...args: never[]) => unknown) => Inject(tokenFor(entity));

export function tenantRepositoryProvider(entity: new () => Owned): Provider {
  return {
    provide: tokenFor(entity),
    inject: [DataSource, ReadReplicas],
    useFactory: (dataSource: DataSource, replicas: ReadReplicas) =>
      new TenantRepository(dataSource.getRepository(entity), replicas),
  };
}
