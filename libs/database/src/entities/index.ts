import { ApiKey } from './api-key.entity';
import { DocumentFile } from './document-file.entity';
import { DocumentPage } from './document-page.entity';
import { Document } from './document.entity';
import { Knowledgebase } from './knowledgebase.entity';
import { Language } from './language.entity';
import { Passage } from './passage.entity';
import { SessionToken } from './session-token.entity';
import { Assistant } from './assistant.entity';
import { Folder, Label } from './organisation.entity';
import { PhoneNumber } from './phone-number.entity';
import { SipTrunk } from './sip-trunk.entity';
import { Tool } from './tool.entity';
import { User } from './user.entity';

export * from './document.entity';
export * from './document-page.entity';
export * from './assistant.entity';
export * from './organisation.entity';
export * from './phone-number.entity';
export * from './sip-trunk.entity';
export * from './tool.entity';
export { ApiKey, DocumentFile, Knowledgebase, Language, Passage, SessionToken, User };

/** Every entity, for the data source. */
export const entities = [
  User,
  ApiKey,
  SessionToken,
  Language,
  Knowledgebase,
  Document,
  DocumentFile,
  DocumentPage,
  Passage,
  Tool,
  PhoneNumber,
  SipTrunk,
  Folder,
  Label,
  Assistant,
];
