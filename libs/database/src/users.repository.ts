import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The accounts, as an operator finds them (the API's sign-up and sign-in read and write them through TypeORM). */
@Injectable()
export class UsersRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The id of the account with this email, whatever its letter case (as the unique index compares them). */
  async idByEmail(email: string): Promise<number | undefined> {
    const [user] = (await this.manager.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email])) as {
      id: number;
    }[];
    return user?.id;
  }
}
