import { Inject } from '@nestjs/common';
import type { Provider } from '@nestjs/common';
import { DataSource, EntityManager, FindOptionsOrder, FindOptionsWhere, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { queryPool } from './pool-query';
import { ReadReplicas } from './read-replicas';

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

/**
 * Repository for account data. Every method takes the owner id first and adds it to the query, and the raw
 * TypeORM repository is not exposed, so a query that forgets the account cannot be written through it.
 * A row of another account therefore behaves exactly like a missing one.
 *
 * Reads go where `ReadReplicas` sends the account's reads (a replica fresh enough for it, or the primary); writes,
 * locking reads and everything inside a transaction (`withManager`) use the primary.
 */
export class TenantRepository<T extends Owned> {
  private newestFirstSql?: string;

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

  /** The same repository inside a transaction. */
  withManager(manager: EntityManager): TenantRepository<T> {
    return new TenantRepository(manager.getRepository(this.repository.target));
  }

  findOne(ownerId: number, id: number): Promise<T | null> {
    return this.reading(ownerId, (repository) =>
      repository.findOne({ where: this.scoped(ownerId, { id } as FindOptionsWhere<T>) }),
    );
  }

  /**
   * The row, locked against concurrent writes and deletes until the transaction ends (through `withManager`
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
    return this.reading(ownerId, (repository) =>
      repository.find({ ...query, where: this.scoped(ownerId, query.where) }),
    );
  }

  /**
   * Every row of the owner, newest first, with the columns `find` selects. For short whole-account lists read on
   * every request: the statement is built once and rows are hydrated column by column, without the query
   * builder and result transformer that `find` runs each time (most of the list's cost in TypeORM).
   */
  findAllNewestFirst(ownerId: number): Promise<T[]> {
    return this.reading(ownerId, (repository) => this.allNewestFirst(repository, ownerId));
  }

  private async allNewestFirst(repository: Repository<T>, ownerId: number): Promise<T[]> {
    const { metadata, manager } = repository;
    const columns = metadata.columns.filter((column) => column.isSelect);
    this.newestFirstSql ??= `SELECT ${columns.map((column) => `"${column.databaseName}"`).join(', ')}
        FROM "${metadata.tableName}"
       WHERE "${metadata.findColumnWithPropertyName('userId')!.databaseName}" = $1
       ORDER BY "${metadata.findColumnWithPropertyName('id')!.databaseName}" DESC`;
    // Outside a transaction, straight to the pool: this list is read on every request of some clients.
    const rows: Record<string, unknown>[] = manager.queryRunner
      ? await manager.query(this.newestFirstSql, [ownerId])
      : await queryPool(manager.connection, this.newestFirstSql, [ownerId]);
    const driver = manager.connection.driver;
    return rows.map((row) => {
      const entity = metadata.create() as T;
      for (const column of columns) {
        column.setEntityValue(entity, driver.prepareHydratedValue(row[column.databaseName], column));
      }
      return entity;
    });
  }

  findAndCount(ownerId: number, query: OwnedQuery<T> = {}): Promise<[T[], number]> {
    return this.reading(ownerId, (repository) =>
      repository.findAndCount({ ...query, where: this.scoped(ownerId, query.where) }),
    );
  }

  count(ownerId: number, where?: FindOptionsWhere<T>): Promise<number> {
    return this.reading(ownerId, (repository) => repository.count({ where: this.scoped(ownerId, where) }));
  }

  exists(ownerId: number, where: FindOptionsWhere<T>): Promise<boolean> {
    return this.reading(ownerId, (repository) => repository.exists({ where: this.scoped(ownerId, where) }));
  }

  async create(ownerId: number, values: Omit<Partial<T>, 'id' | 'userId'>): Promise<T> {
    const entity = this.repository.create({ ...values, userId: ownerId } as T);
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

const tokenFor = (entity: Function) => `TenantRepository<${entity.name}>`;

/** Injects the TenantRepository of an entity registered with `tenantRepositoryProvider`. */
export const InjectTenantRepository = (entity: Function) => Inject(tokenFor(entity));

export function tenantRepositoryProvider(entity: new () => Owned): Provider {
  return {
    provide: tokenFor(entity),
    inject: [DataSource, ReadReplicas],
    useFactory: (dataSource: DataSource, replicas: ReadReplicas) =>
      new TenantRepository(dataSource.getRepository(entity), replicas),
  };
}
