import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** Which of the owner's assistants a list shows. */
export interface AssistantFilter {
  folderId?: number;
  labelId?: number;
  /** Part of the name, whatever its case; LIKE's wildcards in it match themselves. */
  search?: string;
}

/** An assistant's links, as rows of each link table (and the folders named). */
export interface AssistantLinkRows {
  labels: { assistant_id: number; id: number; name: string; color: string | null }[];
  tools: { assistant_id: number; id: number; name: string }[];
  languages: { assistant_id: number; language_id: number }[];
  folders: { id: number; name: string; color: string | null }[];
}

/** The lists an assistant's write replaces: a list sent replaces the old one, `[]` clears it, one not sent stays. */
export interface AssistantLinkChanges {
  label_ids?: number[];
  tool_ids?: number[];
  secondary_language_ids?: number[];
}

/**
 * What an assistant is read and listed with besides its own row (which `TenantRepository<Assistant>` reads and
 * writes): the list's page of ids with its total, and its labels, tools, secondary languages and folder, read for a
 * whole page with a fixed number of statements. Reads take the owner (and go to a replica that has the owner's last
 * write); `replaceLinks` runs in the assistant's write transaction.
 */
@Injectable()
export class AssistantLinksRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** A page of the owner's assistants' ids, newest first, and how many the filter matches. */
  async page(ownerId: number, filter: AssistantFilter, limit: number, offset: number): Promise<[number[], number]> {
    const conditions = ['a.user_id = $1'];
    const parameters: unknown[] = [ownerId];
    if (filter.folderId !== undefined) {
      parameters.push(filter.folderId);
      conditions.push(`a.folder_id = $${parameters.length}`);
    }
    if (filter.labelId !== undefined) {
      parameters.push(filter.labelId);
      conditions.push(
        `EXISTS (SELECT 1 FROM assistant_labels l WHERE l.assistant_id = a.id AND l.label_id = $${parameters.length})`,
      );
    }
    if (filter.search) {
      parameters.push(`%${filter.search.replace(/[\\\\%_]/g, (character) => `\\${character}`)}%`);
      conditions.push(`a.name ILIKE $${parameters.length}`);
    }
    const where = conditions.join(' AND ');
    const [ids, [{ total }]] = await Promise.all([
      this.reads.query<{ id: number }>(
        ownerId,
        `SELECT a.id FROM assistants a WHERE ${where} ORDER BY a.id DESC LIMIT $${parameters.length + 1} OFFSET $${parameters.length + 2}`,
        [...parameters, limit, offset],
      ),
      this.reads.query<{ total: number }>(
        ownerId,
        `SELECT count(*)::int AS total FROM assistants a WHERE ${where}`,
        parameters,
      ),
    ]);
    return [ids.map((row) => row.id), total];
  }

  async links(ownerId: number, ids: number[], folderIds: number[]): Promise<AssistantLinkRows> {
    const read = <Row>(sql: string, parameters: unknown[]) => this.reads.query<Row>(ownerId, sql, parameters);
    const [labels, tools, languages, folders] = await Promise.all([
      read<AssistantLinkRows['labels'][number]>(
        `SELECT al.assistant_id, l.id, l.name, l.color FROM assistant_labels al JOIN labels l ON l.id = al.label_id
          WHERE al.assistant_id = ANY($1::int[]) ORDER BY l.id`,
        [ids],
      ),
      read<AssistantLinkRows['tools'][number]>(
        `SELECT at.assistant_id, t.id, t.name FROM assistant_tools at JOIN tools t ON t.id = at.tool_id
          WHERE at.assistant_id = ANY($1::int[]) ORDER BY t.id`,
        [ids],
      ),
      read<AssistantLinkRows['languages'][number]>(
        `SELECT assistant_id, language_id FROM assistant_secondary_languages
          WHERE assistant_id = ANY($1::int[]) ORDER BY position`,
        [ids],
      ),
      folderIds.length > 0
        ? read<AssistantLinkRows['folders'][number]>(`SELECT id, name, color FROM folders WHERE id = ANY($1::int[])`, [
            folderIds,
          ])
        : Promise.resolve([]),
    ]);
    return { labels, tools, languages, folders };
  }

  async replaceLinks(id: number, changes: AssistantLinkChanges): Promise<void> {
    if (changes.label_ids) {
      await this.manager.query(`DELETE FROM assistant_labels WHERE assistant_id = $1`, [id]);
      await this.manager.query(
        `INSERT INTO assistant_labels (assistant_id, label_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
        [id, changes.label_ids],
      );
    }
    if (changes.tool_ids) {
      await this.manager.query(`DELETE FROM assistant_tools WHERE assistant_id = $1`, [id]);
      await this.manager.query(
        `INSERT INTO assistant_tools (assistant_id, tool_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
        [id, changes.tool_ids],
      );
    }
    if (changes.secondary_language_ids) {
      await this.manager.query(`DELETE FROM assistant_secondary_languages WHERE assistant_id = $1`, [id]);
      await this.manager.query(
        `INSERT INTO assistant_secondary_languages (assistant_id, language_id, position)
         SELECT $1, language_id, min(position) FROM unnest($2::int[]) WITH ORDINALITY AS item(language_id, position)
         GROUP BY language_id`,
        [id, changes.secondary_language_ids],
      );
    }
  }
}
