import { Accounts1763800000000 } from './1763800000000-accounts';
import { Languages1763800000001 } from './1763800000001-languages';
import { Knowledgebases1763800000002 } from './1763800000002-knowledgebases';
import { Tools1763800000010 } from './1763800000010-tools';
import { Telephony1763800000020 } from './1763800000020-telephony';
import { SearchLanguagesAndRefresh1763800000030 } from './1763800000030-search-languages-and-refresh';
import { Assistants1763800000040 } from './1763800000040-assistants';
import { Campaigns1763800000060 } from './1763800000060-campaigns';
import { LeadCounters1763800000061 } from './1763800000061-lead-counters';
import { Calls1763800000070 } from './1763800000070-calls';
import { CallCounters1763800000071 } from './1763800000071-call-counters';
import { IdempotencyKeys1763800000050 } from './1763800000050-idempotency-keys';
import { Dialer1763800000080 } from './1763800000080-dialer';
import { RateWindows1763800000090 } from './1763800000090-rate-windows';
import { RecordingsOfRecordingAssistants1763800000100 } from './1763800000100-recordings-of-recording-assistants';
import { IdempotencySealedAndLeased1763800000110 } from './1763800000110-idempotency-sealed-and-leased';
import { OneNumberOneHolder1763800000120 } from './1763800000120-one-number-one-holder';
import { CallsByAge1763800000130 } from './1763800000130-calls-by-age';
import { SearchPerKnowledgebase1764117300000 } from './1764117300000-search-per-knowledgebase';
import { SearchRelatedWords1764117400000 } from './1764117400000-search-related-words';
import { AccountWritePositions1764119250000 } from './1764119250000-account-write-positions';
import { PurgedCallCounts1764119260000 } from './1764119260000-purged-call-counts';
import { DeploymentIdentity1764120000000 } from './1764120000000-deployment-identity';
import { CallsClientNumberPerAccount1764121000000 } from './1764121000000-calls-client-number-per-account';
import { CallWebhooksDue1764122000000 } from './1764122000000-call-webhooks-due';
import { SearchLexemesSimilarIndex1764123000000 } from './1764123000000-search-lexemes-similar-index';
import { PassagesWalkIndex1764124000000 } from './1764124000000-passages-walk-index';
import { SearchPhrasalVerbs1764125000000 } from './1764125000000-search-phrasal-verbs';
import { LeadsPhoneNumberPerAccount1764126000000 } from './1764126000000-leads-phone-number-per-account';
import { VoiceRuntime1764127000000 } from './1764127000000-voice-runtime';
import { IdempotentCreates1764128000000 } from './1764128000000-idempotent-creates';
import { PassagesCutVersion1764129100000 } from './1764129100000-passages-cut-version';
import { SearchWordNeighbours1764129200000 } from './1764129200000-search-word-neighbours';
import { CallExternalIdLength1764129300000 } from './1764129300000-call-external-id-length';
import { AssignedNumberOutboundTrunk1764129400000 } from './1764129400000-assigned-number-outbound-trunk';
import { ModelUsageDaily1764129500000 } from './1764129500000-model-usage-daily';
import { CallEventConflicts1764131400000 } from './1764131400000-call-event-conflicts';
import { PhoneNumbersByNationalNumber1764131500000 } from './1764131500000-phone-numbers-by-national-number';
import { LocalCallControlRequests1764131700000 } from './1764131700000-local-call-control-requests';
import { RingTimeHook1764133520000 } from './1764133520000-ring-time-hook';
import { CallAnalysis1764140000000 } from './1764140000000-call-analysis';
import { CallAnalysisIndexes1764140000001 } from './1764140000001-call-analysis-indexes';
import { CallUsageDaily1764140000002 } from './1764140000002-call-usage-daily';
import { CallControlEvents1764142000000 } from './1764142000000-call-control-events';
import { AccountCallSlots1764141000000 } from './1764141000000-account-call-slots';
import { CallControl1764150500000 } from './1764150500000-call-control';
import { AccountCampaignsWaiting1764151000000 } from './1764151000000-account-campaigns-waiting';
import { CallTransferClaim1764152000000 } from './1764152000000-call-transfer-claim';
import { WebCallNumbers1764160000000 } from './1764160000000-web-call-numbers';
import { AssistantVoicePipeline1764170000000 } from './1764170000000-assistant-voice-pipeline';
import { PassageEmbeddings1764180000000 } from './1764180000000-passage-embeddings';
import { EmbeddingRefused1764190000000 } from './1764190000000-embedding-refused';
import { SearchUnseenWords1764200000000 } from './1764200000000-search-unseen-words';
import { StatementsPlannedOnce1764210000000 } from './1764210000000-statements-planned-once';
import { SearchStatusClasses1764220000000 } from './1764220000000-search-status-classes';
import { PassagesWalkById1764230000000 } from './1764230000000-passages-walk-by-id';

/** Listed explicitly (not globbed) so the same list works from sources, the build and tests. */
export const migrations = [
  Accounts1763800000000,
  Languages1763800000001,
  Knowledgebases1763800000002,
  Tools1763800000010,
  Telephony1763800000020,
  SearchLanguagesAndRefresh1763800000030,
  Assistants1763800000040,
  IdempotencyKeys1763800000050,
  Campaigns1763800000060,
  LeadCounters1763800000061,
  Calls1763800000070,
  CallCounters1763800000071,
  Dialer1763800000080,
  RateWindows1763800000090,
  RecordingsOfRecordingAssistants1763800000100,
  IdempotencySealedAndLeased1763800000110,
  OneNumberOneHolder1763800000120,
  CallsByAge1763800000130,
  SearchPerKnowledgebase1764117300000,
  SearchRelatedWords1764117400000,
  AccountWritePositions1764119250000,
  PurgedCallCounts1764119260000,
  DeploymentIdentity1764120000000,
  CallsClientNumberPerAccount1764121000000,
  CallWebhooksDue1764122000000,
  SearchLexemesSimilarIndex1764123000000,
  PassagesWalkIndex1764124000000,
  SearchPhrasalVerbs1764125000000,
  LeadsPhoneNumberPerAccount1764126000000,
  VoiceRuntime1764127000000,
  IdempotentCreates1764128000000,
  PassagesCutVersion1764129100000,
  SearchWordNeighbours1764129200000,
  CallExternalIdLength1764129300000,
  AssignedNumberOutboundTrunk1764129400000,
  ModelUsageDaily1764129500000,
  CallEventConflicts1764131400000,
  PhoneNumbersByNationalNumber1764131500000,
  LocalCallControlRequests1764131700000,
  RingTimeHook1764133520000,
  CallAnalysis1764140000000,
  CallAnalysisIndexes1764140000001,
  CallUsageDaily1764140000002,
  AccountCallSlots1764141000000,
  CallControlEvents1764142000000,
  CallControl1764150500000,
  AccountCampaignsWaiting1764151000000,
  CallTransferClaim1764152000000,
  WebCallNumbers1764160000000,
  AssistantVoicePipeline1764170000000,
  PassageEmbeddings1764180000000,
  EmbeddingRefused1764190000000,
  SearchUnseenWords1764200000000,
  StatementsPlannedOnce1764210000000,
  SearchStatusClasses1764220000000,
  PassagesWalkById1764230000000,
];
