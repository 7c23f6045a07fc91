import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import { In } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  analysisPlanOf,
  AssistantEnvelope,
  AssistantListQuery,
  AssistantMessageEnvelope,
  AssistantResponse,
  CreateAssistantRequest,
  endCallSettingsOf,
  modelSettingsOf,
  transcriberSettingsOf,
  voiceSettingsOf,
  Errors,
  humaniseAttribute,
  LengthAwarePage,
  MessageResponse,
  toAssistantResponse,
  UpdateAssistantRequest,
  toStoredTransferDestination,
  ValidationFailed,
  voicemailSettingsOf,
  pageOffset,
} from '@app/contracts';
import { newWebhookSecret, SecretBox, SecretContexts } from '@app/crypto';
import { JobQueue, Jobs } from '@app/jobs';
import {
  Assistant,
  type AssistantLinkRows,
  AssistantLinksRepository,
  InjectTenantRepository,
  TenantRepository,
  type Transaction,
  Transactions,
} from '@app/database';
import { pageOfList } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

interface Links {
  labels: Map<number, { id: number; name: string; color: string | null }[]>;
  tools: Map<number, { id: number; name: string }[]>;
  languages: Map<number, number[]>;
  folders: Map<number, { id: number; name: string; color: string | null }>;
}

/** A reference the request makes: a single id field or a list, and the table of the account it must be in. */
interface Reference {
  field: string;
  ids: number[];
  list: boolean;
  table: 'folders' | 'labels' | 'tools' | 'knowledgebases' | 'phone_numbers' | 'languages';
}

@Injectable()
export class AssistantsService implements OnModuleInit {
  private readonly logger = new Logger(AssistantsService.name);

  constructor(
    @InjectTenantRepository(Assistant) private readonly assistants: TenantRepository<Assistant>,
    private readonly transactions: Transactions,
    private readonly links: AssistantLinksRepository,
    private readonly secrets: SecretBox,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
    private readonly creates: IdempotentCreates,
  ) {}

  /** The create's dispatch rule may not have been told before its process died: it is told again (it is idempotent). */
  onModuleInit(): void {
    this.creates.recoverWith('assistant', async (user, id) => {
      const data = await this.one(user, id);
      await this.answeringChanged([data.phone_number_id]);
      return this.created(data);
    });
  }

  async list(
    user: AuthenticatedUser,
    query: AssistantListQuery,
    request: Request,
  ): Promise<LengthAwarePage<AssistantResponse>> {
    const [ids, total] = await this.links.page(
      user.id,
      { folderId: query.folder_id, labelId: query.label_id, search: query.search },
      query.per_page,
      pageOffset(query),
    );
    const data = await this.responses(user, ids);
    return pageOfList(data, total, query, request, this.config.appUrl);
  }

  async get(user: AuthenticatedUser, id: number): Promise<AssistantEnvelope> {
    return { data: await this.one(user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateAssistantRequest): Promise<AssistantMessageEnvelope> {
    const id = await this.transactions.runRetrying(async (transaction) => {
      await this.checkReferences(transaction, user, request);
      const assistants = this.assistants.within(transaction);
      const created = await assistants.create(user.id, {
        name: request.name,
        type: request.type,
        languageId: request.language_id,
        voiceId: request.voice?.voice_id ?? request.voice_id ?? null,
        model: modelSettingsOf(request.model),
        transcriber: transcriberSettingsOf(request.transcriber),
        voice: voiceSettingsOf(request.voice),
        timezone: request.timezone ?? 'UTC',
        initialMessage: request.initial_message ?? null,
        systemPrompt: request.system_prompt ?? null,
        knowledgebaseId: request.knowledgebase_id ?? null,
        phoneNumberId: request.phone_number_id ?? null,
        folderId: request.folder_id ?? null,
        webhookUrl: request.webhook_url ?? null,
        isWebhookActive: request.is_webhook_active ?? false,
        webhookSecretSealed: null,
        variables: request.variables ?? {},
        postCallSchema: request.post_call_schema ?? [],
        analysis: request.analysis ? analysisPlanOf(request.analysis) : null,
        transferDestinations: (request.transfer_destinations ?? []).map(toStoredTransferDestination),
        endCall: request.end_call ? endCallSettingsOf(request.end_call) : null,
        voicemail: request.voicemail ? voicemailSettingsOf(request.voicemail) : null,
        maxDuration: request.max_duration ?? 600,
        record: request.record ?? false,
        status: request.status ?? 'active',
      });
      if (created.webhookUrl) await this.storeSecret(assistants, user.id, created.id, newWebhookSecret());
      await this.links.within(transaction).replaceLinks(created.id, request);
      await this.creates.record(transaction, 'assistant', created.id);
      return created.id;
    });
    await this.answeringChanged([request.phone_number_id]);
    return this.created(await this.one(user, id));
  }

  private created(data: AssistantResponse): AssistantMessageEnvelope {
    return { message: 'Assistant created successfully.', data };
  }

  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdateAssistantRequest,
  ): Promise<AssistantMessageEnvelope> {
    const numbers = await this.transactions.runRetrying(async (transaction) => {
      const assistants = this.assistants.within(transaction);
      if (!(await assistants.exists(user.id, { id }))) throw Errors.assistantNotFound();
      // References first, then the assistant: the order in which a folder's or label's delete takes them.
      await this.checkReferences(transaction, user, request);
      const current = await assistants.findOneForUpdate(user.id, id);
      if (!current) throw Errors.assistantNotFound();
      const fields: Partial<Assistant> = {};
      const set = <K extends keyof Assistant>(key: K, value: Assistant[K] | undefined) => {
        if (value !== undefined) fields[key] = value;
      };
      set('name', request.name);
      set('type', request.type);
      set('languageId', request.language_id);
      // `voice.voice_id` is `voice_id` under another name (validation has them agree when both are sent).
      set('voiceId', request.voice?.voice_id !== undefined ? request.voice.voice_id : request.voice_id);
      if (request.model !== undefined) fields.model = modelSettingsOf(request.model);
      if (request.transcriber !== undefined) fields.transcriber = transcriberSettingsOf(request.transcriber);
      if (request.voice !== undefined) fields.voice = voiceSettingsOf(request.voice);
      set('timezone', request.timezone);
      set('initialMessage', request.initial_message);
      set('systemPrompt', request.system_prompt);
      set('knowledgebaseId', request.knowledgebase_id);
      set('phoneNumberId', request.phone_number_id);
      set('folderId', request.folder_id);
      set('webhookUrl', request.webhook_url);
      set('isWebhookActive', request.is_webhook_active);
      set('variables', request.variables);
      set('postCallSchema', request.post_call_schema);
      // Null (or a plan that is all defaults, stored whole) reads as the defaults.
      if (request.analysis !== undefined) fields.analysis = request.analysis ? analysisPlanOf(request.analysis) : null;
      set('transferDestinations', request.transfer_destinations?.map(toStoredTransferDestination));
      if (request.end_call !== undefined) fields.endCall = request.end_call ? endCallSettingsOf(request.end_call) : null;
      if (request.voicemail !== undefined) {
        fields.voicemail = request.voicemail ? voicemailSettingsOf(request.voicemail) : null;
      }
      set('maxDuration', request.max_duration);
      set('record', request.record);
      set('status', request.status);
      await assistants.update(user.id, id, { ...fields, updatedAt: new Date() });
      // The signing secret is made when a webhook URL is first set, and kept (rotated only on request).
      if (request.webhook_url && !current.webhookSecretSealed) {
        await this.storeSecret(assistants, user.id, id, newWebhookSecret());
      }
      await this.links.within(transaction).replaceLinks(id, request);
      const moved = request.phone_number_id !== undefined && request.phone_number_id !== current.phoneNumberId;
      return moved ? [current.phoneNumberId, request.phone_number_id] : [];
    });
    await this.answeringChanged(numbers);
    return { message: 'Assistant updated successfully.', data: await this.one(user, id) };
  }

  /** Its calls stay (their assistant becomes null; they keep its name). */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    const assistant = await this.assistants.findOne(user.id, id);
    if (!assistant || !(await this.assistants.delete(user.id, id))) throw Errors.assistantNotFound();
    await this.answeringChanged([assistant.phoneNumberId]);
    return { message: 'Assistant deleted successfully.' };
  }

  /**
   * Numbers whose answering assistant changed: their SIP trunk's dispatch rule is told (on the worker). The change
   * itself is stored either way; a dispatch rule that could not be told is logged and keeps the assistant it named.
   */
  private async answeringChanged(numbers: (number | null | undefined)[]): Promise<void> {
    for (const phoneNumberId of new Set(numbers)) {
      if (typeof phoneNumberId !== 'number') continue;
      await this.jobs
        .enqueue(Jobs.refreshInboundDispatch, { phoneNumberId })
        .catch((error: Error) =>
          this.logger.error({ phoneNumberId, error: error.message }, 'the dispatch rule of a number was not queued'),
        );
    }
  }

  async rotateWebhookSecret(user: AuthenticatedUser, id: number): Promise<AssistantMessageEnvelope> {
    if (!(await this.assistants.exists(user.id, { id }))) throw Errors.assistantNotFound();
    await this.storeSecret(this.assistants, user.id, id, newWebhookSecret());
    return { message: 'Webhook secret rotated successfully.', data: await this.one(user, id) };
  }

  private async storeSecret(
    assistants: TenantRepository<Assistant>,
    ownerId: number,
    id: number,
    secret: string,
  ): Promise<void> {
    await assistants.update(ownerId, id, {
      webhookSecretSealed: this.secrets.seal(secret, SecretContexts.webhookSecret(id)),
    });
  }

  /**
   * Every referenced id must exist in the account (languages: exist at all); the failures are reported together,
   * on the request's own field names (`label_ids.1`), before anything is written.
   */
  private async checkReferences(
    transaction: Transaction,
    user: AuthenticatedUser,
    request: CreateAssistantRequest | UpdateAssistantRequest,
  ): Promise<void> {
    const references: Reference[] = [];
    const single = (field: string, value: number | null | undefined, table: Reference['table']) => {
      if (value !== undefined && value !== null) references.push({ field, ids: [value], list: false, table });
    };
    single('language_id', request.language_id, 'languages');
    single('knowledgebase_id', request.knowledgebase_id, 'knowledgebases');
    single('phone_number_id', request.phone_number_id, 'phone_numbers');
    single('folder_id', request.folder_id, 'folders');
    if (request.secondary_language_ids)
      references.push({
        field: 'secondary_language_ids',
        ids: request.secondary_language_ids,
        list: true,
        table: 'languages',
      });
    if (request.label_ids) references.push({ field: 'label_ids', ids: request.label_ids, list: true, table: 'labels' });
    if (request.tool_ids) references.push({ field: 'tool_ids', ids: request.tool_ids, list: true, table: 'tools' });

    // Locked in one order (by table, then id), so that a concurrent delete of one waits for this write.
    references.sort((first, second) => first.table.localeCompare(second.table));
    const errors: Record<string, string[]> = {};
    for (const reference of references) {
      const found = await transaction.lockReferences(
        reference.table,
        reference.ids,
        reference.table === 'languages' ? null : user.id,
        reference.table === 'phone_numbers' ? `AND status = 'active'` : '',
      );
      reference.ids.forEach((id, index) => {
        if (found.has(id)) return;
        const key = reference.list ? `${reference.field}.${index}` : reference.field;
        errors[key] = [`The selected ${humaniseAttribute(key)} is invalid.`];
      });
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  }

  private async one(user: AuthenticatedUser, id: number): Promise<AssistantResponse> {
    const [response] = await this.responses(user, [id]);
    if (!response) throw Errors.assistantNotFound();
    return response;
  }

  /** The responses of a page of assistants, in order, with a fixed number of queries whatever the page size. */
  private async responses(user: AuthenticatedUser, ids: number[]): Promise<AssistantResponse[]> {
    if (ids.length === 0) return [];
    const rows = await this.assistants.find(user.id, { where: { id: In(ids) } });
    const links = this.grouped(
      await this.links.links(
        user.id,
        ids,
        rows.flatMap((row) => (row.folderId ? [row.folderId] : [])),
      ),
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [this.toResponse(row, links)] : [];
    });
  }

  private grouped({ labels, tools, languages, folders }: AssistantLinkRows): Links {
    const group = <Item extends { assistant_id: number }, Picked>(items: Item[], pick: (item: Item) => Picked) => {
      const map = new Map<number, Picked[]>();
      for (const item of items) map.set(item.assistant_id, [...(map.get(item.assistant_id) ?? []), pick(item)]);
      return map;
    };
    return {
      labels: group(labels, ({ id, name, color }) => ({ id, name, color })),
      tools: group(tools, ({ id, name }) => ({ id, name })),
      languages: group(languages, ({ language_id }) => language_id),
      folders: new Map(folders.map((folder) => [folder.id, folder])),
    };
  }

  private toResponse(row: Assistant, links: Links): AssistantResponse {
    return toAssistantResponse(
      row,
      {
        secondaryLanguageIds: links.languages.get(row.id) ?? [],
        tools: links.tools.get(row.id) ?? [],
        labels: links.labels.get(row.id) ?? [],
        folder: row.folderId ? (links.folders.get(row.folderId) ?? null) : null,
      },
      row.webhookSecretSealed ? this.secrets.open(row.webhookSecretSealed, SecretContexts.webhookSecret(row.id)) : null,
    );
  }
}
