import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { User } from './entities/user.entity';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The accounts: sign-up and sign-in, and an operator finding one. Emails are stored trimmed and lower-cased. */
@Injectable()
export class UsersRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  emailTaken(email: string): Promise<boolean> {
    return this.manager.getRepository(User).exists({ where: { email } });
  }

  /** The new account; two registrations racing for one email fail the second on the unique index. */
  create(values: { name: string; email: string; passwordHash: string }): Promise<User> {
    const users = this.manager.getRepository(User);
    return users.save(users.create(values));
  }

  /** The account with this email and its password hash, which no other read selects. */
  async withPasswordHash(email: string): Promise<User | undefined> {
    const user = await this.manager
      .getRepository(User)
      .createQueryBuilder('user')
      .addSelect('user.passwordHash')
      .where('user.email = :email', { email })
      .getOne();
    return user ?? undefined;
  }

  /** The id of the account with this email, whatever its letter case (as the unique index compares them). */
  async idByEmail(email: string): Promise<number | undefined> {
    const [user] = (await this.manager.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email])) as {
      id: number;
    }[];
    return user?.id;
  }
}
