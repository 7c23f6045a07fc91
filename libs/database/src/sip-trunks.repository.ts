import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { deploymentId } from './deployment-identity';
import { PhoneNumber } from './entities/phone-number.entity';
import { heldByAnother } from './phone-number-holders';
import { SipTrunk } from './entities/sip-trunk.entity';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/**
 * What a SIP trunk's provisioning request asks for (`sip_provisioning_requests.changes`), as the API writes it and
 * the worker applies it: only the fields that change, the password sealed for the trunk.
 */
export interface TrunkChanges {
  phone_number?: string;
  nickname?: string | null;
  sip_username?: string;
  sip_password_sealed?: string;
  sip_address?: string;
  sip_calling_format?: string;
  inbound_authorization_type?: 'auth' | 'ip';
  allowed_inbound_ips?: string[] | null;
  outbound_proxy?: boolean;
  country_code?: string;
}

/** A provisioning request as the worker carries it out. */
export interface ProvisioningRequestRow {
  id: number;
  phone_number_id: number | null;
  kind: 'create' | 'update';
  changes: TrunkChanges;
  status: string;
}

/** A request's outcome, as the API that waits for it reads it. */
export interface ProvisioningOutcome {
  status: 'pending' | 'done' | 'failed' | 'abandoned';
  error: string | null;
  kind: 'create' | 'update';
  phone_number_id: number | null;
}

/** Provider resources that must go: replaced ones, or a released trunk's. */
export interface ProviderTrunks {
  inbound?: { trunkId: string; dispatchRuleId: string | null };
  outbound?: string;
}

/** A recorded provider resource the clean-up deletes. */
export interface ProviderCleanupRow {
  id: number;
  kind: 'inbound' | 'outbound';
  trunk_id: string;
  dispatch_rule_id: string | null;
}

/**
 * SIP trunks' provisioning: the requests the API writes and waits on and the worker settles (whoever settles first
 * wins, under the request's row lock), the provider resources recorded for deletion, and the trunk rows the
 * provisioning locks. The API's statements take the owner where they read an account's trunk; the worker's, by
 * request or trunk id, are the system's own.
 */
@Injectable()
export class SipTrunksRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  // The API's.

  async insertRequest(numberId: number, kind: 'create' | 'update', changes: TrunkChanges): Promise<number> {
    const [row] = (await this.manager.query(
      `INSERT INTO sip_provisioning_requests (phone_number_id, kind, changes) VALUES ($1, $2, $3) RETURNING id`,
      [numberId, kind, JSON.stringify(changes)],
    )) as { id: number }[];
    return row.id;
  }

  async outcome(requestId: number): Promise<ProvisioningOutcome | undefined> {
    const [row] = (await this.manager.query(
      `SELECT status, error, kind, phone_number_id FROM sip_provisioning_requests WHERE id = $1`,
      [requestId],
    )) as ProvisioningOutcome[];
    return row;
  }

  /** Settles a request nobody settled yet as abandoned, and answers it (none when the worker settled it first). */
  async abandon(requestId: number): Promise<Pick<ProvisioningOutcome, 'kind' | 'phone_number_id'> | undefined> {
    const [rows] = (await this.manager.query(
      `UPDATE sip_provisioning_requests SET status = 'abandoned', settled_at = now()
        WHERE id = $1 AND status = 'pending' RETURNING kind, phone_number_id`,
      [requestId],
    )) as [Pick<ProvisioningOutcome, 'kind' | 'phone_number_id'>[], number];
    return rows[0];
  }

  /** Removes the number of a create that did not come to be (one being provisioned only). */
  async removeUnprovisioned(numberId: number | null): Promise<void> {
    if (numberId === null) return;
    await this.changed(`DELETE FROM phone_numbers WHERE id = $1 AND status = 'provisioning'`, [numberId]);
  }

  async insertTrunk(trunk: Partial<SipTrunk>): Promise<void> {
    await this.manager.insert(SipTrunk, trunk);
  }

  /** The owner's trunk rows of these numbers. */
  findTrunks(ownerId: number, ids: number[]): Promise<SipTrunk[]> {
    return this.manager
      .getRepository(SipTrunk)
      .createQueryBuilder('trunk')
      .where('trunk.user_id = :ownerId AND trunk.phone_number_id IN (:...ids)', { ownerId, ids })
      .getMany();
  }

  /** The owner's trunk row. */
  findTrunk(ownerId: number, id: number): Promise<SipTrunk | null> {
    return this.manager.getRepository(SipTrunk).findOne({ where: { id, userId: ownerId } });
  }

  /** The owner's trunk's provider resources, locked until the transaction ends (waiting for any provisioning). */
  async lockProviderTrunks(ownerId: number, id: number): Promise<ProviderTrunks | undefined> {
    const [row] = (await this.manager.query(
      `SELECT inbound_trunk_id, inbound_dispatch_rule_id, outbound_trunk_id FROM sip_trunks
        WHERE phone_number_id = $1 AND user_id = $2 FOR UPDATE`,
      [id, ownerId],
    )) as {
      inbound_trunk_id: string | null;
      inbound_dispatch_rule_id: string | null;
      outbound_trunk_id: string | null;
    }[];
    if (!row) return undefined;
    return {
      ...(row.inbound_trunk_id
        ? { inbound: { trunkId: row.inbound_trunk_id, dispatchRuleId: row.inbound_dispatch_rule_id } }
        : {}),
      ...(row.outbound_trunk_id ? { outbound: row.outbound_trunk_id } : {}),
    };
  }

  // The worker's.

  async request(requestId: number): Promise<ProvisioningRequestRow | undefined> {
    const [row] = (await this.manager.query(`SELECT * FROM sip_provisioning_requests WHERE id = $1`, [
      requestId,
    ])) as ProvisioningRequestRow[];
    return row;
  }

  /** The trunk row, locked until the transaction ends, and its number. */
  async lockTrunk(id: number): Promise<{ trunk: SipTrunk | null; number: PhoneNumber | null }> {
    const trunk = await this.manager
      .getRepository(SipTrunk)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    const number = await this.manager.getRepository(PhoneNumber).findOne({ where: { id } });
    return { trunk, number };
  }

  /** Settles the request as done, unless the API abandoned it meanwhile; answers whether it did. */
  async settleDone(requestId: number): Promise<boolean> {
    return (
      (await this.changed(
        `UPDATE sip_provisioning_requests SET status = 'done', settled_at = now() WHERE id = $1 AND status = 'pending'`,
        [requestId],
      )) > 0
    );
  }

  async settleFailed(requestId: number, error: string): Promise<void> {
    await this.changed(
      `UPDATE sip_provisioning_requests SET status = 'failed', error = $2, settled_at = now()
        WHERE id = $1 AND status = 'pending'`,
      [requestId, error.slice(0, 1000)],
    );
  }

  /** Writes what the request made of the trunk and its number. */
  async saveProvisioned(id: number, number: Partial<PhoneNumber>, trunk: Partial<SipTrunk>): Promise<void> {
    await this.manager.update(PhoneNumber, { id }, number);
    await this.manager.update(SipTrunk, { id }, trunk);
  }

  /** Whether another trunk or number of any account holds `phoneNumber` (see `heldByAnother`). */
  numberHeldByAnother(phoneNumber: string, numberId: number, ownerId: number): Promise<boolean> {
    return heldByAnother(this.manager, phoneNumber, numberId, ownerId);
  }

  /** This deployment's id, the owner the provider objects it makes carry (see `deploymentId`). */
  deploymentId(): Promise<string> {
    return deploymentId(this.manager);
  }

  /** The assistant that answers the number (the oldest, should several name it). */
  async answeringAssistant(numberId: number): Promise<number | null> {
    const [row] = (await this.manager.query(
      `SELECT id FROM assistants WHERE phone_number_id = $1 ORDER BY id LIMIT 1`,
      [numberId],
    )) as { id: number }[];
    return row?.id ?? null;
  }

  /** Records provider resources for the clean-up to delete. */
  async recordCleanups(trunks: ProviderTrunks): Promise<void> {
    if (trunks.inbound) {
      await this.manager.query(
        `INSERT INTO provider_cleanups (kind, trunk_id, dispatch_rule_id) VALUES ('inbound', $1, $2)`,
        [trunks.inbound.trunkId, trunks.inbound.dispatchRuleId],
      );
    }
    if (trunks.outbound) {
      await this.manager.query(`INSERT INTO provider_cleanups (kind, trunk_id) VALUES ('outbound', $1)`, [
        trunks.outbound,
      ]);
    }
  }

  /** The next recorded clean-ups, locked against another worker's run (skipping those it holds). */
  lockDueCleanups(limit: number): Promise<ProviderCleanupRow[]> {
    return this.manager.query(
      `SELECT id, kind, trunk_id, dispatch_rule_id FROM provider_cleanups ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
  }

  async cleanedUp(id: number): Promise<void> {
    await this.changed(`DELETE FROM provider_cleanups WHERE id = $1`, [id]);
  }

  async cleanupFailed(id: number, error: string): Promise<void> {
    await this.changed(`UPDATE provider_cleanups SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [
      id,
      error.slice(0, 1000),
    ]);
  }

  /** Every provider id a trunk row or a pending clean-up still needs. */
  async knownProviderIds(): Promise<Set<string>> {
    const rows = (await this.manager.query(`
      SELECT unnest(ARRAY[inbound_trunk_id, inbound_dispatch_rule_id, outbound_trunk_id]) AS id FROM sip_trunks
      UNION SELECT trunk_id FROM provider_cleanups
      UNION SELECT dispatch_rule_id FROM provider_cleanups`)) as { id: string | null }[];
    return new Set(rows.map((row) => row.id).filter((id): id is string => Boolean(id)));
  }

  /** Each stored trunk's inbound trunk and the number it should carry. */
  storedInboundNumbers(): Promise<{ id: number; trunk_id: string; number: string }[]> {
    return this.manager.query(
      `SELECT t.phone_number_id AS id, t.inbound_trunk_id AS trunk_id, n.phone_number AS number
         FROM sip_trunks t JOIN phone_numbers n ON n.id = t.phone_number_id
        WHERE t.inbound_trunk_id IS NOT NULL`,
    );
  }

  /** The trunk's inbound trunk id, locked; none when another transaction (a provisioning) holds the row. */
  async lockInboundTrunkIfFree(id: number): Promise<string | null | undefined> {
    const [row] = (await this.manager.query(
      `SELECT inbound_trunk_id FROM sip_trunks WHERE phone_number_id = $1 FOR UPDATE SKIP LOCKED`,
      [id],
    )) as { inbound_trunk_id: string | null }[];
    return row ? row.inbound_trunk_id : undefined;
  }
}
