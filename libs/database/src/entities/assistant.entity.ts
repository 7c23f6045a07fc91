import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import type {
  AnalysisPlan,
  PostCallField,
  StoredEndCallSettings,
  StoredModelSettings,
  StoredTranscriberSettings,
  StoredTransferDestination,
  StoredVoiceSettings,
  StoredVoicemailSettings,
} from '@app/contracts';
import { OwnedEntity } from './owned.entity';

/** An AI voice assistant. Its labels, tools and secondary languages live in join tables. */
@Entity({ name: 'assistants' })
export class Assistant extends OwnedEntity {
  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  type: 'inbound' | 'outbound';

  @Column({ name: 'language_id', type: 'integer' })
  languageId: number;

  @Column({ name: 'voice_id', type: 'varchar', length: 255, nullable: true })
  voiceId: string | null;

  /** Null (never sent): the agent's own LLM, transcriber and voice provider. */
  @Column({ type: 'jsonb', nullable: true })
  model: StoredModelSettings | null;

  @Column({ type: 'jsonb', nullable: true })
  transcriber: StoredTranscriberSettings | null;

  /** The provider and speed; the voice itself is `voiceId`. */
  @Column({ type: 'jsonb', nullable: true })
  voice: StoredVoiceSettings | null;

  @Column({ type: 'varchar', length: 64 })
  timezone: string;

  @Column({ name: 'initial_message', type: 'varchar', length: 200, nullable: true })
  initialMessage: string | null;

  @Column({ name: 'system_prompt', type: 'text', nullable: true })
  systemPrompt: string | null;

  @Column({ name: 'knowledgebase_id', type: 'integer', nullable: true })
  knowledgebaseId: number | null;

  @Column({ name: 'phone_number_id', type: 'integer', nullable: true })
  phoneNumberId: number | null;

  @Column({ name: 'folder_id', type: 'integer', nullable: true })
  folderId: number | null;

  @Column({ name: 'webhook_url', type: 'varchar', length: 2048, nullable: true })
  webhookUrl: string | null;

  @Column({ name: 'is_webhook_active', type: 'boolean' })
  isWebhookActive: boolean;

  /** Sealed with SecretBox, context `assistant:<id>:webhook-secret`. */
  @Column({ name: 'webhook_secret_sealed', type: 'text', nullable: true })
  webhookSecretSealed: string | null;

  @Column({ type: 'jsonb' })
  variables: Record<string, string | number | boolean | null>;

  @Column({ name: 'post_call_schema', type: 'jsonb' })
  postCallSchema: PostCallField[];

  /** The post-call analysis plan as last sent, complete; null (never sent): the defaults. */
  @Column({ type: 'jsonb', nullable: true })
  analysis: AnalysisPlan | null;

  /** Where the assistant may transfer a call: the only numbers a transfer may dial. */
  @Column({ name: 'transfer_destinations', type: 'jsonb' })
  transferDestinations: StoredTransferDestination[];

  /** Null (never sent): the defaults. */
  @Column({ name: 'end_call', type: 'jsonb', nullable: true })
  endCall: StoredEndCallSettings | null;

  /** Null (never sent): the defaults. */
  @Column({ type: 'jsonb', nullable: true })
  voicemail: StoredVoicemailSettings | null;

  @Column({ name: 'max_duration', type: 'integer' })
  maxDuration: number;

  @Column({ type: 'boolean' })
  record: boolean;

  @Column({ type: 'varchar', length: 16 })
  status: 'active' | 'inactive';

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
