// Generated from openapi.json by `npm run sdk:generate` (openapi-typescript); do not edit.

export interface paths {
  '/api/auth/register': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create an account and get a session token */
    post: operations['register'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Get a session token for an email and password */
    post: operations['login'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/auth/logout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** End the session whose token made the request */
    post: operations['logout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/me': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The authenticated account */
    get: operations['getCurrentUser'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/api-keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the API keys of the account (never their tokens) */
    get: operations['listApiKeys'];
    put?: never;
    /** Create an API key; its token is shown only in this answer */
    post: operations['createApiKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/api-keys/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Delete an API key; it stops working at once */
    delete: operations['deleteApiKey'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistants/languages': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Languages available to assistants */
    get: operations['listLanguages'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/settings': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The account’s settings: its default ring-time hook */
    get: operations['getSettings'];
    /** Set the account’s default ring-time hook, for numbers that name no `server_url` of their own */
    put: operations['updateSettings'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/settings/server-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replace the secret that signs the account’s default ring-time hook requests */
    post: operations['rotateSettingsServerSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the knowledgebases of the account */
    get: operations['listKnowledgebases'];
    put?: never;
    /** Create a knowledgebase */
    post: operations['createKnowledgebase'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a knowledgebase */
    get: operations['getKnowledgebase'];
    /** Update a knowledgebase (partial) */
    put: operations['updateKnowledgebase'];
    post?: never;
    /** Delete a knowledgebase with its documents; assistants using it are detached */
    delete: operations['deleteKnowledgebase'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases/{id}/search': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Passages that answer a query, best first */
    get: operations['searchKnowledgebase'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases/{knowledgebaseId}/documents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the documents of a knowledgebase */
    get: operations['listDocuments'];
    put?: never;
    /** Add a document: a website as JSON, or a PDF, TXT or Word file as multipart; processed in the background */
    post: operations['createDocument'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases/{knowledgebaseId}/documents/{documentId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a document, with its processing outcome */
    get: operations['getDocument'];
    put?: never;
    post?: never;
    /** Delete a document and its passages */
    delete: operations['deleteDocument'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/knowledgebases/{knowledgebaseId}/documents/{documentId}/refresh': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Re-crawl a website document now, in the background; unchanged pages keep their passages */
    post: operations['refreshDocument'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/tools': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the tools of the account (a bare array) */
    get: operations['listTools'];
    put?: never;
    /** Create an HTTP tool an assistant can call during a call */
    post: operations['createTool'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/tools/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a tool, header values included */
    get: operations['getTool'];
    /** Update a tool; omitted fields stay, lists sent replace */
    put: operations['updateTool'];
    post?: never;
    /** Delete a tool; assistants using it lose it */
    delete: operations['deleteTool'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/tools/{id}/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Call the tool now as an assistant would, and see the request sent and the answer received */
    post: operations['testTool'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers/sip-trunks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the SIP trunks of the account */
    get: operations['listSipTrunks'];
    put?: never;
    /** Connect your own telephony: provisions an inbound and an outbound trunk before answering */
    post: operations['createSipTrunk'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers/sip-trunks/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a SIP trunk (never its password) */
    get: operations['getSipTrunk'];
    /** Update any subset of fields; the trunks the change affects are re-created, new before old go */
    put: operations['updateSipTrunk'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Legacy: SMS-capable numbers with an active subscription */
    get: operations['listSmsPhoneNumbers'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers/all': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Every number of the account, SIP trunks included */
    get: operations['listPhoneNumbers'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** Set the number’s ring-time hook (`server_url`, `server_timeout_ms`), over the account’s default */
    put: operations['updatePhoneNumber'];
    post?: never;
    /** Release a number; a SIP trunk also loses its provider trunks */
    delete: operations['deletePhoneNumber'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/phone-numbers/server-secret/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replace the secret that signs the number’s ring-time hook requests */
    post: operations['rotatePhoneNumberServerSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistants/get': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List assistants, newest first; filter by folder, label or name */
    get: operations['listAssistants'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistant': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create an assistant */
    post: operations['createAssistant'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistant/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read an assistant with its links */
    get: operations['getAssistant'];
    /** Update an assistant; lists sent replace, `[]` clears */
    put: operations['updateAssistant'];
    post?: never;
    /** Delete an assistant; its call history stays */
    delete: operations['deleteAssistant'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistant/{id}/webhook-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replace the secret that signs webhook deliveries */
    post: operations['rotateWebhookSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/folders': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List folders, newest first */
    get: operations['listFolders'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/folder': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create a folder */
    post: operations['createFolder'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/folder/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** Rename or recolour a folder */
    put: operations['updateFolder'];
    post?: never;
    /** Delete a folder; its assistants become unfiled */
    delete: operations['deleteFolder'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/labels': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List labels, newest first */
    get: operations['listLabels'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/label': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create a label */
    post: operations['createLabel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/label/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** Rename or recolour a label */
    put: operations['updateLabel'];
    post?: never;
    /** Delete a label; assistants lose it */
    delete: operations['deleteLabel'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaigns': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List campaigns, newest first */
    get: operations['listCampaigns'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaign': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create a campaign (status draft) */
    post: operations['createCampaign'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaign/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a campaign */
    get: operations['getCampaign'];
    /** Update a campaign (partial) */
    put: operations['updateCampaign'];
    post?: never;
    /** Delete a campaign and its leads */
    delete: operations['deleteCampaign'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaign/{id}/leads/import': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Import leads from a CSV file (multipart `file`), on the worker */
    post: operations['importLeads'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaign/{id}/leads/imports/{importId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Progress of a lead import and its first errors */
    get: operations['getLeadImport'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/campaign/{id}/leads/imports/{importId}/errors.csv': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Every row error of a lead import, as CSV */
    get: operations['downloadLeadImportErrors'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/leads': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List leads, newest first, with filters */
    get: operations['listLeads'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/lead': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Add a lead to a campaign */
    post: operations['createLead'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/leads/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a lead */
    get: operations['getLead'];
    put?: never;
    post?: never;
    /** Delete a lead */
    delete: operations['deleteLead'];
    options?: never;
    head?: never;
    /** Change a lead’s number, variables or secondary contacts, or blacklist it */
    patch: operations['updateLead'];
    trace?: never;
  };
  '/api/user/campaigns/update-status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Start or stop a campaign */
    post: operations['updateCampaignStatus'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List calls, newest first, with filters */
    get: operations['listCalls'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a call */
    get: operations['getCall'];
    put?: never;
    post?: never;
    /** Delete a call record */
    delete: operations['deleteCall'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/make_call': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Place one outbound call now, from the assistant’s number */
    post: operations['makeCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The call’s transcript turns, notes and tool invocations, in the order they happened */
    get: operations['listCallEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/events/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Watch a live call: its events as they are stored, as server-sent events, until it ends
     * @description Each event of the call (`transcript`, `note`, `tool_call`, `control`, and the call-control kinds) as it is stored, on any API process: `id` is the event’s id, `event` its type, `data` the event as `GET /user/calls/{id}/events` lists it. Reconnecting with `Last-Event-ID` (as EventSource does) delivers what came after that event, nothing twice. A comment line every 15 seconds keeps the connection open. Once the call has ended and everything stored before is sent, an `end` event closes the stream. An ended call can be replayed after a `Last-Event-ID`; without one it is 409. At most 100 streams of an account are open at once on one API process.
     */
    get: operations['watchCallEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/hangup': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Hang up a live call: its runtime ends it, or the provider does within 5 s */
    post: operations['hangUpCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/say': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Have the assistant of a live call say a text, as it is */
    post: operations['sayInCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/instruct': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Add an instruction to the model’s context in a live call (the caller does not hear it) */
    post: operations['instructCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/calls/{id}/analysis': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Run the call’s post-call analysis again, on its assistant’s plan as it is now */
    post: operations['reanalyseCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/assistant/{id}/web-call': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Talk to an assistant from a browser: a web call and a token to join its room
     * @description Writes a call of `type: web` (no phone numbers), opens its LiveKit room with the agent dispatched into it (its dispatch metadata carries the call’s `external_id`), and answers the LiveKit URL, the room and a participant token for the browser: it may join this room only, to publish and subscribe, within `expires_at` (at most 10 minutes). Counts against the account’s limit of calls in progress. Keep the API key on a server: hand the browser the token alone.
     */
    post: operations['startWebCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/user/usage': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The account’s calls, minutes and model tokens per day (UTC), from counters kept as they are used */
    get: operations['getUsage'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    MessageResponse: {
      message: string;
    };
    /**
     * @example {
     *       "name": "Ada Lovelace",
     *       "email": "ada@example.com",
     *       "password": "correct horse battery staple"
     *     }
     */
    RegisterRequest: {
      /** @example Ada Lovelace */
      name: string;
      /** Format: email */
      email: string;
      /** @example correct horse battery staple */
      password: string;
    };
    UserResponse: {
      /** @example 1 */
      id: number;
      /** @example Ada Lovelace */
      name: string;
      /** @example ada@example.com */
      email: string;
    };
    RegisterResponse: {
      /** @example Registered successfully. */
      message: string;
      user: components['schemas']['UserResponse'];
      /** @description Session token; send as `Authorization: Bearer <token>` */
      token: string;
    };
    ValidationErrorResponse: {
      /** @example The name field is required. (and 1 more error) */
      message: string;
      /**
       * @example {
       *       "name": [
       *         "The name field is required."
       *       ],
       *       "schema.0.type": [
       *         "The selected schema.0.type is invalid."
       *       ]
       *     }
       */
      errors: {
        [key: string]: string[];
      };
    };
    /**
     * @example {
     *       "email": "ada@example.com",
     *       "password": "correct horse battery staple"
     *     }
     */
    LoginRequest: {
      /** Format: email */
      email: string;
      /** @example correct horse battery staple */
      password: string;
      /** @description A label for the session token */
      token_name?: string;
    };
    LoginResponse: {
      /** @example Registered successfully. */
      message: string;
      user: components['schemas']['UserResponse'];
      /** @description Session token; send as `Authorization: Bearer <token>` */
      token: string;
      /** @example auth_token */
      token_name: string;
    };
    UserEnvelope: {
      data: components['schemas']['UserResponse'];
    };
    /**
     * @example {
     *       "name": "CRM integration"
     *     }
     */
    CreateApiKeyRequest: {
      /** @example CRM integration */
      name: string;
    };
    CreatedApiKey: {
      /** @description What `DELETE /user/api-keys/{id}` takes */
      id: number;
      name: string;
      /** @description Shown only in this response; store it now */
      token: string;
      /** Format: date-time */
      created_at: string;
    };
    CreateApiKeyResponse: {
      /** @example API key created successfully. */
      message: string;
      api_key: components['schemas']['CreatedApiKey'];
    };
    ApiKeyResponse: {
      id: number;
      name: string;
      /** Format: date-time */
      last_used_at: string | null;
      /** Format: date-time */
      created_at: string;
    };
    ApiKeyListResponse: {
      api_keys: components['schemas']['ApiKeyResponse'][];
    };
    LanguageResponse: {
      /** @example 1 */
      id: number;
      /** @example English */
      name: string;
      /** @example en */
      iso_2: string;
    };
    SettingsResponse: {
      server_url: string | null;
      /** @example 2000 */
      server_timeout_ms: number;
      /** @description Signs the hook’s requests (`whsec_...`); made when `server_url` is first set; owner only */
      server_secret: string | null;
    };
    SettingsEnvelope: {
      data: components['schemas']['SettingsResponse'];
    };
    /** @example {} */
    UpdateSettingsRequest: {
      /**
       * Format: uri
       * @description Asked at ring time which assistant takes an inbound call (`call.assistant_request`, signed); `null` clears it
       * @example https://crm.example.com/voice/assistant-request
       */
      server_url?: string | null;
      /**
       * @description How long the session waits for the server’s answer before the number’s own assistant answers
       * @default 2000
       */
      server_timeout_ms?: number;
    };
    SettingsMessageEnvelope: {
      data: components['schemas']['SettingsResponse'];
      /** @example Settings updated successfully. */
      message: string;
    };
    KnowledgebaseResponse: {
      id: number;
      name: string;
      description: string | null;
      language_id: number | null;
      /** @enum {string} */
      status: 'empty' | 'processing' | 'active' | 'failed';
      /** @example Active */
      status_label: string;
      documents_count: number;
      assistants_count: number;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    KnowledgebaseListResponse: {
      data: components['schemas']['KnowledgebaseResponse'][];
    };
    /**
     * @example {
     *       "name": "Support FAQ"
     *     }
     */
    CreateKnowledgebaseRequest: {
      /** @example Support FAQ */
      name: string;
      description?: string | null;
      /**
       * @description Language of its documents (stemming, stop words); none searches word for word
       * @example null
       */
      language_id?: number | null;
    };
    KnowledgebaseMessageEnvelope: {
      data: components['schemas']['KnowledgebaseResponse'];
      message: string;
    };
    KnowledgebaseEnvelope: {
      data: components['schemas']['KnowledgebaseResponse'];
    };
    ErrorFieldResponse: {
      error: string;
    };
    /** @example {} */
    UpdateKnowledgebaseRequest: {
      name?: string;
      /** @description `null` clears it */
      description?: string | null;
      /**
       * @description A change re-indexes its passages in the background; `null` clears it
       * @example null
       */
      language_id?: number | null;
    };
    SearchResult: {
      document_id: number;
      document_name: string;
      content: string;
      /** @description The content with the words that matched the query marked `**like this**` */
      highlight: string;
      /** @description Relevance; higher is better */
      score: number;
      /** @description Page the passage comes from (websites) */
      source_url?: string;
    };
    SearchResponse: {
      data: components['schemas']['SearchResult'][];
    };
    DocumentResponse: {
      id: number;
      name: string;
      description: string | null;
      /** @enum {string} */
      type: 'website' | 'pdf' | 'txt' | 'docx';
      /** @example Website */
      type_label: string;
      /** @enum {string} */
      status: 'processing' | 'active' | 'failed';
      /** @example Processing */
      status_label: string;
      /** Format: date-time */
      created_at: string;
    };
    DocumentListResponse: {
      data: components['schemas']['DocumentResponse'][];
    };
    DocumentLinkItem: {
      /** Format: uri */
      link: string;
    };
    /**
     * @example {
     *       "name": "Opening hours",
     *       "type": "website",
     *       "url": "https://example.com/hours"
     *     }
     */
    CreateWebsiteDocumentBody: {
      name: string;
      description?: string | null;
      /** @enum {string} */
      type: 'website';
      /**
       * Format: uri
       * @description The page to start crawling from (required without `links`)
       */
      url?: string;
      /** @description Exactly these pages (required without `url`) */
      links?: components['schemas']['DocumentLinkItem'][];
      /**
       * @description Further same-site links to follow from `url`
       * @default 10
       */
      relative_links_limit?: number;
      /** @description Re-crawl the website this often; unchanged pages keep their passages */
      refresh_interval_hours?: number;
    };
    CreateFileDocumentBody: {
      /** @example Opening hours */
      name: string;
      /** @description Empty means none */
      description?: string | null;
      /**
       * @example txt
       * @enum {string}
       */
      type: 'pdf' | 'txt' | 'docx';
      /**
       * Format: binary
       * @description The file, at most 20 MB
       */
      file: Blob;
    };
    CreateDocumentResponse: {
      message: string;
      data: components['schemas']['DocumentResponse'];
    };
    DocumentPageResponse: {
      url: string;
      /** @enum {string} */
      status: 'fetched' | 'failed' | 'skipped';
      title?: string;
      characters: number;
      /** @description Why the page was not used */
      error?: string;
    };
    DocumentRefreshResponse: {
      /** @enum {string} */
      status: 'succeeded' | 'failed';
      /** Format: date-time */
      finished_at: string;
      pages_added: number;
      pages_changed: number;
      pages_removed: number;
      pages_unchanged: number;
      /** @description Why it failed; the previous content was kept */
      error: string | null;
    };
    DocumentDetailResponse: {
      id: number;
      name: string;
      description: string | null;
      /** @enum {string} */
      type: 'website' | 'pdf' | 'txt' | 'docx';
      /** @example Website */
      type_label: string;
      /** @enum {string} */
      status: 'processing' | 'active' | 'failed';
      /** @example Processing */
      status_label: string;
      /** Format: date-time */
      created_at: string;
      error_message: string | null;
      /** @description Characters of text extracted */
      content_length: number;
      /** @description Websites only */
      pages?: components['schemas']['DocumentPageResponse'][];
      /** @description Websites only */
      refresh_interval_hours?: number | null;
      /**
       * Format: date-time
       * @description Websites only
       */
      last_refreshed_at?: string | null;
      /** @description Websites only: what the last refresh changed */
      last_refresh?: components['schemas']['DocumentRefreshResponse'] | null;
    };
    DocumentEnvelope: {
      data: components['schemas']['DocumentDetailResponse'];
    };
    ToolHeader: {
      /** @example Authorization */
      name: string;
      /** @description May use `{{variable}}` templates; stored encrypted */
      value: string;
    };
    ToolStaticField: {
      key: string;
      /** @description May use `{{variable}}` templates */
      value: string;
    };
    ToolParameter: {
      name: string;
      /** @enum {string} */
      type: 'string' | 'number' | 'float' | 'integer' | 'boolean';
      description: string;
      /** @default false */
      required?: boolean;
    };
    ToolResponse: {
      id: number;
      name: string;
      description: string;
      /** @enum {string} */
      type: 'http';
      endpoint: string;
      /** @enum {string} */
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      /** @enum {string} */
      body_format: 'json' | 'form';
      timeout: number;
      headers: components['schemas']['ToolHeader'][];
      static_fields: components['schemas']['ToolStaticField'][];
      schema: components['schemas']['ToolParameter'][];
      automation_flow_id: string | null;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    /**
     * @example {
     *       "name": "lookup_order",
     *       "description": "example",
     *       "endpoint": "https://api.example.com/orders/{order_id}",
     *       "method": "GET"
     *     }
     */
    CreateToolRequest: {
      /**
       * @default json
       * @enum {string}
       */
      body_format?: 'json' | 'form';
      /** @default 10 */
      timeout?: number;
      /** @description Replaces every header */
      headers?: components['schemas']['ToolHeader'][];
      /** @description Replaces every field */
      static_fields?: components['schemas']['ToolStaticField'][];
      /** @description Replaces the schema */
      schema?: components['schemas']['ToolParameter'][];
      /** @example lookup_order */
      name: string;
      /** @description When and how the assistant should use the tool */
      description: string;
      /**
       * @description http(s) URL; `{param}` placeholders are filled from the arguments
       * @example https://api.example.com/orders/{order_id}
       */
      endpoint: string;
      /** @enum {string} */
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      /**
       * @description Links the tool to an automation-platform flow; `endpoint`, `method` and `body_format` are then fixed
       * @example null
       */
      automation_flow_id?: string | null;
    };
    ToolMessageEnvelope: {
      data: components['schemas']['ToolResponse'];
      message: string;
    };
    ToolEnvelope: {
      data: components['schemas']['ToolResponse'];
    };
    /** @example {} */
    UpdateToolRequest: {
      /**
       * @default json
       * @enum {string}
       */
      body_format?: 'json' | 'form';
      /** @default 10 */
      timeout?: number;
      /** @description Replaces every header */
      headers?: components['schemas']['ToolHeader'][];
      /** @description Replaces every field */
      static_fields?: components['schemas']['ToolStaticField'][];
      /** @description Replaces the schema */
      schema?: components['schemas']['ToolParameter'][];
      name?: string;
      description?: string;
      endpoint?: string;
      /** @enum {string} */
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    };
    /** @example {} */
    TestToolRequest: {
      /** @description What the assistant would fill in, checked against the tool schema; a name it lacks is refused */
      arguments?: {
        [key: string]: unknown;
      };
      /** @description Call variables for `{{variable}}` templates */
      variables?: {
        [key: string]: string;
      };
    };
    ToolTestRequestSent: {
      /** @enum {string} */
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      url: string;
      headers: {
        [key: string]: string;
      };
      /** @description The encoded body, or null for GET and DELETE */
      body: string | null;
    };
    ToolTestResponseReceived: {
      status: number;
      headers: {
        [key: string]: string;
      };
      /** @description Parsed JSON when the response is a complete JSON object or array, else the text */
      body:
        | {
            [key: string]: unknown;
          }
        | unknown[]
        | string;
      /** @description The body was cut at 64 KB */
      body_truncated: boolean;
    };
    ToolTestResult: {
      request: components['schemas']['ToolTestRequestSent'];
      response: components['schemas']['ToolTestResponseReceived'] | null;
      duration_ms: number;
      /** @description Why no answer came, naming the endpoint’s host at most (never its path, query or a header): for logs and the tool’s owner, not to be put before the person on the call */
      error: string | null;
      /**
       * @description The kind of failure when no answer came
       * @enum {string|null}
       */
      error_code:
        | 'invalid_url'
        | 'unsupported_protocol'
        | 'blocked_address'
        | 'too_many_redirects'
        | 'redirect_refused'
        | 'timeout'
        | 'too_large'
        | 'tls'
        | 'network'
        | null;
    };
    ToolTestEnvelope: {
      data: components['schemas']['ToolTestResult'];
    };
    SipTrunkResponse: {
      id: number;
      /** @enum {string} */
      sip_trunk_type: 'number' | 'extension';
      phone_number: string;
      nickname: string | null;
      sip_username: string;
      sip_address: string;
      /** @enum {string} */
      sip_calling_format: '+e164' | 'e164' | 'national';
      /** @enum {string} */
      inbound_authorization_type: 'auth' | 'ip';
      allowed_inbound_ips: string[] | null;
      outbound_proxy: boolean;
      country_code: string | null;
      inbound_trunk_id: string;
      outbound_trunk_id: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    SipTrunkListResponse: {
      data: components['schemas']['SipTrunkResponse'][];
    };
    /**
     * @example {
     *       "sip_trunk_type": "number",
     *       "phone_number": "+14155550100",
     *       "sip_username": "acme-trunk",
     *       "sip_password": "a-long-sip-secret",
     *       "sip_address": "sip.carrier.example.com"
     *     }
     */
    CreateSipTrunkRequest: {
      /** @description `null` clears it */
      nickname?: string | null;
      /**
       * @default +e164
       * @enum {string}
       */
      sip_calling_format?: '+e164' | 'e164' | 'national';
      /**
       * @default auth
       * @enum {string}
       */
      inbound_authorization_type?: 'auth' | 'ip';
      /** @description Addresses or CIDR ranges allowed to send calls; required (at least one) with `ip` */
      allowed_inbound_ips?: string[] | null;
      /**
       * @description Send outbound calls through the fixed-egress proxy
       * @default false
       */
      outbound_proxy?: boolean;
      /** @description ISO 3166-1 alpha-2; derived from the number when absent */
      country_code?: string;
      /** @enum {string} */
      sip_trunk_type: 'number' | 'extension';
      /**
       * @description Phone number (stored as E.164) or extension
       * @example +14155550100
       */
      phone_number: string;
      /** @example acme-trunk */
      sip_username: string;
      /**
       * @description Never returned
       * @example a-long-sip-secret
       */
      sip_password: string;
      /** @example sip.carrier.example.com */
      sip_address: string;
    };
    SipTrunkMessageEnvelope: {
      data: components['schemas']['SipTrunkResponse'];
      message: string;
    };
    SipTrunkEnvelope: {
      data: components['schemas']['SipTrunkResponse'];
    };
    /** @example {} */
    UpdateSipTrunkRequest: {
      /** @description `null` clears it */
      nickname?: string | null;
      /**
       * @default +e164
       * @enum {string}
       */
      sip_calling_format?: '+e164' | 'e164' | 'national';
      /**
       * @default auth
       * @enum {string}
       */
      inbound_authorization_type?: 'auth' | 'ip';
      /** @description Addresses or CIDR ranges allowed to send calls; required (at least one) with `ip` */
      allowed_inbound_ips?: string[] | null;
      /**
       * @description Send outbound calls through the fixed-egress proxy
       * @default false
       */
      outbound_proxy?: boolean;
      /** @description ISO 3166-1 alpha-2; derived from the number when absent */
      country_code?: string;
      phone_number?: string;
      sip_username?: string;
      /** @description Never returned */
      sip_password?: string;
      sip_address?: string;
    };
    PhoneNumberResponse: {
      server_url: string | null;
      /** @example 2000 */
      server_timeout_ms: number;
      /** @description Signs the hook’s requests (`whsec_...`); made when `server_url` is first set; owner only */
      server_secret: string | null;
      id: number;
      /** @description E.164 (an extension for SIP trunks of that type) */
      phone_number: string;
      nickname: string | null;
      country_code: string | null;
      /** @enum {string} */
      type: 'normal' | 'sip' | 'caller_id';
      /** @example SIP */
      type_label: string;
      sms_capable: boolean;
      /** @description Where it is provisioned; for SIP trunks the SIP server; empty when nobody recorded one */
      region: string;
      has_active_subscription: boolean;
      /** Format: date-time */
      created_at: string;
    };
    PhoneNumberListResponse: {
      data: components['schemas']['PhoneNumberResponse'][];
    };
    /** @example {} */
    UpdatePhoneNumberRequest: {
      /**
       * Format: uri
       * @description Asked at ring time which assistant takes an inbound call (`call.assistant_request`, signed); `null` clears it
       * @example https://crm.example.com/voice/assistant-request
       */
      server_url?: string | null;
      /**
       * @description How long the session waits for the server’s answer before the number’s own assistant answers
       * @default 2000
       */
      server_timeout_ms?: number;
    };
    PhoneNumberMessageEnvelope: {
      /** @example Phone number updated successfully. */
      message: string;
      data: components['schemas']['PhoneNumberResponse'];
    };
    PageLink: {
      url: string | null;
      /** @example 1 */
      label: string;
      active: boolean;
    };
    LengthAwarePageMeta: {
      current_page: number;
      first_page_url: string;
      from: number | null;
      last_page: number;
      last_page_url: string;
      links: components['schemas']['PageLink'][];
      next_page_url: string | null;
      path: string;
      per_page: number;
      prev_page_url: string | null;
      to: number | null;
      total: number;
    };
    ModelSettingsResponse: {
      /** @enum {string} */
      provider: 'openai' | 'livekit';
      model: string | null;
      temperature: number | null;
    };
    TranscriberSettingsResponse: {
      /** @enum {string} */
      provider: 'deepgram' | 'openai' | 'livekit';
      model: string | null;
      language: string | null;
    };
    VoiceSettingsResponse: {
      /** @enum {string} */
      provider: 'openai' | 'livekit';
      /** @description The same as the assistant’s `voice_id` */
      voice_id: string | null;
      speed: number | null;
    };
    LinkedItem: {
      id: number;
      name: string;
    };
    LinkedColourItem: {
      id: number;
      name: string;
      /** @enum {string|null} */
      color: 'gray' | 'slate' | 'red' | 'orange' | 'amber' | 'green' | 'teal' | 'blue' | 'purple' | 'pink' | null;
    };
    PostCallItems: {
      /** @enum {string} */
      type: 'string' | 'number' | 'integer' | 'boolean' | 'enum';
      /** @description Required with `type: enum`, and only then: the values the field may take */
      values?: string[];
    };
    PostCallField: {
      name: string;
      /**
       * @description `enum` takes one of `values`; `array` a list of `items`
       * @enum {string}
       */
      type: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'array';
      description: string;
      /** @description Required with `type: enum`, and only then: the values the field may take */
      values?: string[];
      /** @description Required with `type: array`, and only then */
      items?: components['schemas']['PostCallItems'];
    };
    AnalysisSummaryPlanResponse: {
      enabled: boolean;
      prompt: string | null;
    };
    AnalysisStructuredDataPlanResponse: {
      enabled: boolean;
    };
    AnalysisSuccessPlanResponse: {
      enabled: boolean;
      /** @enum {string} */
      rubric: 'pass_fail' | 'score_1_10' | 'descriptive';
      criteria: string | null;
    };
    AnalysisPlanResponse: {
      summary: components['schemas']['AnalysisSummaryPlanResponse'];
      structured_data: components['schemas']['AnalysisStructuredDataPlanResponse'];
      success: components['schemas']['AnalysisSuccessPlanResponse'];
    };
    TransferDestinationResponse: {
      name: string;
      description: string;
      number: string | null;
      sip_uri: string | null;
      /** @enum {string} */
      mode: 'cold' | 'warm';
      message: string | null;
    };
    EndCallSettingsResponse: {
      enabled: boolean;
      message: string | null;
    };
    VoicemailSettingsResponse: {
      /** @enum {string} */
      action: 'hangup' | 'leave_message';
      message: string | null;
    };
    AssistantResponse: {
      id: number;
      name: string;
      /** @enum {string} */
      type: 'inbound' | 'outbound';
      language_id: number;
      secondary_language_ids: number[];
      voice_id: string | null;
      model: components['schemas']['ModelSettingsResponse'] | null;
      transcriber: components['schemas']['TranscriberSettingsResponse'] | null;
      voice: components['schemas']['VoiceSettingsResponse'] | null;
      timezone: string;
      initial_message: string | null;
      system_prompt: string | null;
      knowledgebase_id: number | null;
      phone_number_id: number | null;
      tool_ids: number[];
      tools: components['schemas']['LinkedItem'][];
      folder_id: number | null;
      folder: components['schemas']['LinkedColourItem'] | null;
      label_ids: number[];
      labels: components['schemas']['LinkedColourItem'][];
      webhook_url: string | null;
      is_webhook_active: boolean;
      /** @description Signs webhook deliveries (`whsec_...`); owner only */
      webhook_secret: string | null;
      variables: {
        [key: string]: unknown;
      };
      post_call_schema: components['schemas']['PostCallField'][];
      analysis: components['schemas']['AnalysisPlanResponse'];
      transfer_destinations: components['schemas']['TransferDestinationResponse'][];
      end_call: components['schemas']['EndCallSettingsResponse'];
      voicemail: components['schemas']['VoicemailSettingsResponse'];
      max_duration: number;
      record: boolean;
      /** @enum {string} */
      status: 'active' | 'inactive';
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    ModelSettings: {
      /**
       * @example openai
       * @enum {string}
       */
      provider: 'openai' | 'livekit';
      /**
       * @description The provider’s model id; null: the agent’s model for that provider
       * @example gpt-4.1-mini
       */
      model?: string | null;
      /**
       * @description Sampling temperature; null: the provider’s default
       * @example 0.4
       */
      temperature?: number | null;
    };
    TranscriberSettings: {
      /**
       * @example deepgram
       * @enum {string}
       */
      provider: 'deepgram' | 'openai' | 'livekit';
      /**
       * @description The provider’s model id; null: the agent’s model for that provider
       * @example nova-3
       */
      model?: string | null;
      /**
       * @description A BCP 47 tag, or `multi`; null: the assistant’s languages (`multi` when it has several)
       * @example en-US
       */
      language?: string | null;
    };
    VoiceSettings: {
      /**
       * @example openai
       * @enum {string}
       */
      provider: 'openai' | 'livekit';
      /**
       * @description The provider’s voice; the assistant’s `voice_id` under another name (sent, it sets both)
       * @example alloy
       */
      voice_id?: string | null;
      /**
       * @description Speech speed, 1 the voice’s own; null: the provider’s default
       * @example 1.1
       */
      speed?: number | null;
    };
    AnalysisSummaryPlanRequest: {
      /** @default true */
      enabled?: boolean;
      /** @description How to summarise, replacing the default instruction ("2-3 sentences: why the caller called, ...") */
      prompt?: string | null;
    };
    AnalysisStructuredDataPlanRequest: {
      /**
       * @description Extract the `post_call_schema` fields (nothing to do while it has none)
       * @default true
       */
      enabled?: boolean;
    };
    AnalysisSuccessPlanRequest: {
      /** @default true */
      enabled?: boolean;
      /**
       * @description `pass_fail`: true or false; `score_1_10`: an integer, 6 and up a success; `descriptive`: `excellent`, `good` (a success), `fair` or `poor`
       * @default pass_fail
       * @enum {string}
       */
      rubric?: 'pass_fail' | 'score_1_10' | 'descriptive';
      /** @description What a successful call achieves; none: the assistant’s system prompt says what it is for */
      criteria?: string | null;
    };
    AnalysisPlanRequest: {
      summary?: components['schemas']['AnalysisSummaryPlanRequest'];
      structured_data?: components['schemas']['AnalysisStructuredDataPlanRequest'];
      success?: components['schemas']['AnalysisSuccessPlanRequest'];
    };
    TransferDestination: {
      /**
       * @description What the assistant names it by (the tools’ naming rule); unique among the assistant’s
       * @example billing_desk
       */
      name: string;
      /** @description When the assistant should transfer there */
      description: string;
      /**
       * @description E.164
       * @example +14155550142
       */
      number?: string | null;
      /**
       * @description A `sip:` or `sips:` URI, instead of a number (cold transfers only: a warm one dials a number)
       * @example sip:desk@pbx.example.com
       */
      sip_uri?: string | null;
      /**
       * @description `cold`: the caller is handed over at once; `warm`: the person is called first, briefed by the assistant, then joined to the caller
       * @default cold
       * @enum {string}
       */
      mode?: 'cold' | 'warm';
      /** @description What the assistant says to the caller before it transfers them */
      message?: string | null;
    };
    EndCallSettings: {
      /** @default true */
      enabled?: boolean;
      /**
       * @description Said before the assistant hangs up; null: the model’s own words
       * @example Thank you for calling. Goodbye!
       */
      message?: string | null;
    };
    VoicemailSettings: {
      /**
       * @description `hangup` at once, or `leave_message` and then hang up
       * @enum {string}
       */
      action: 'hangup' | 'leave_message';
      /**
       * @description Required with `leave_message`: left on the machine, `{{variables}}` filled in
       * @example Hi, this is Ada from Example Dental calling about your appointment. Please call us back.
       */
      message?: string | null;
    };
    /**
     * @example {
     *       "name": "Spring follow-up caller",
     *       "type": "outbound",
     *       "language_id": 1,
     *       "knowledgebase_id": 1,
     *       "phone_number_id": 1,
     *       "tool_ids": [
     *         1
     *       ],
     *       "model": {
     *         "provider": "openai",
     *         "model": "gpt-4.1-mini",
     *         "temperature": 0.4
     *       },
     *       "transcriber": {
     *         "provider": "deepgram",
     *         "model": "nova-3",
     *         "language": "en-US"
     *       },
     *       "voice": {
     *         "provider": "openai",
     *         "voice_id": "alloy",
     *         "speed": 1.1
     *       },
     *       "transfer_destinations": [
     *         {
     *           "name": "billing_desk",
     *           "description": "The caller asks about an invoice or a payment",
     *           "number": "+14155550142",
     *           "mode": "cold"
     *         }
     *       ]
     *     }
     */
    CreateAssistantRequest: {
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      secondary_language_ids?: number[];
      /**
       * @description A voice of the speech provider (`voice.provider`, else the agent’s); the same as `voice.voice_id`
       * @example null
       */
      voice_id?: string | null;
      /** @description The LLM the assistant thinks with; `null` (the default): the agent’s own */
      model?: components['schemas']['ModelSettings'] | null;
      /** @description The speech-to-text the assistant hears with; `null` (the default): the agent’s own */
      transcriber?: components['schemas']['TranscriberSettings'] | null;
      /** @description The text-to-speech the assistant speaks with; `null` (the default): the agent’s own, with `voice_id` */
      voice?: components['schemas']['VoiceSettings'] | null;
      /**
       * @default UTC
       * @example Europe/Berlin
       */
      timezone?: string;
      initial_message?: string | null;
      system_prompt?: string | null;
      /** @example null */
      knowledgebase_id?: number | null;
      /** @example null */
      phone_number_id?: number | null;
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      tool_ids?: number[];
      /**
       * @description `null` takes it out of its folder
       * @example null
       */
      folder_id?: number | null;
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      label_ids?: number[];
      /** Format: uri */
      webhook_url?: string | null;
      /** @default false */
      is_webhook_active?: boolean;
      /** @description Default call variables */
      variables?: {
        [key: string]: unknown;
      };
      post_call_schema?: components['schemas']['PostCallField'][];
      /** @description The post-call analysis plan: replaces the stored one, what it leaves out taking its default; `null` restores the defaults (a summary, the `post_call_schema` fields, a pass/fail grade) */
      analysis?: components['schemas']['AnalysisPlanRequest'] | null;
      /** @description Where the assistant may transfer a call, and nowhere else. Replaces the list; `[]` clears it */
      transfer_destinations?: components['schemas']['TransferDestination'][];
      /** @description Whether the assistant may end the call itself (default: yes); `null` restores the default */
      end_call?: components['schemas']['EndCallSettings'] | null;
      /** @description What the assistant does when a machine answers (default: hang up); `null` restores the default */
      voicemail?: components['schemas']['VoicemailSettings'] | null;
      /**
       * @description Seconds
       * @default 600
       */
      max_duration?: number;
      /** @default false */
      record?: boolean;
      /**
       * @default active
       * @enum {string}
       */
      status?: 'active' | 'inactive';
      name: string;
      /** @enum {string} */
      type: 'inbound' | 'outbound';
      /** @example 1 */
      language_id: number;
    };
    AssistantMessageEnvelope: {
      data: components['schemas']['AssistantResponse'];
      message: string;
    };
    AssistantEnvelope: {
      data: components['schemas']['AssistantResponse'];
    };
    /** @example {} */
    UpdateAssistantRequest: {
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      secondary_language_ids?: number[];
      /**
       * @description A voice of the speech provider (`voice.provider`, else the agent’s); the same as `voice.voice_id`
       * @example null
       */
      voice_id?: string | null;
      /** @description The LLM the assistant thinks with; `null` (the default): the agent’s own */
      model?: components['schemas']['ModelSettings'] | null;
      /** @description The speech-to-text the assistant hears with; `null` (the default): the agent’s own */
      transcriber?: components['schemas']['TranscriberSettings'] | null;
      /** @description The text-to-speech the assistant speaks with; `null` (the default): the agent’s own, with `voice_id` */
      voice?: components['schemas']['VoiceSettings'] | null;
      /**
       * @default UTC
       * @example Europe/Berlin
       */
      timezone?: string;
      initial_message?: string | null;
      system_prompt?: string | null;
      /** @example null */
      knowledgebase_id?: number | null;
      /** @example null */
      phone_number_id?: number | null;
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      tool_ids?: number[];
      /**
       * @description `null` takes it out of its folder
       * @example null
       */
      folder_id?: number | null;
      /**
       * @description Replaces the list; `[]` clears it
       * @example []
       */
      label_ids?: number[];
      /** Format: uri */
      webhook_url?: string | null;
      /** @default false */
      is_webhook_active?: boolean;
      /** @description Default call variables */
      variables?: {
        [key: string]: unknown;
      };
      post_call_schema?: components['schemas']['PostCallField'][];
      /** @description The post-call analysis plan: replaces the stored one, what it leaves out taking its default; `null` restores the defaults (a summary, the `post_call_schema` fields, a pass/fail grade) */
      analysis?: components['schemas']['AnalysisPlanRequest'] | null;
      /** @description Where the assistant may transfer a call, and nowhere else. Replaces the list; `[]` clears it */
      transfer_destinations?: components['schemas']['TransferDestination'][];
      /** @description Whether the assistant may end the call itself (default: yes); `null` restores the default */
      end_call?: components['schemas']['EndCallSettings'] | null;
      /** @description What the assistant does when a machine answers (default: hang up); `null` restores the default */
      voicemail?: components['schemas']['VoicemailSettings'] | null;
      /**
       * @description Seconds
       * @default 600
       */
      max_duration?: number;
      /** @default false */
      record?: boolean;
      /**
       * @default active
       * @enum {string}
       */
      status?: 'active' | 'inactive';
      name?: string;
      /** @enum {string} */
      type?: 'inbound' | 'outbound';
      /** @example 1 */
      language_id?: number;
    };
    SlimPageMeta: {
      current_page: number;
      per_page: number;
      total: number;
    };
    NamedColourResponse: {
      id: number;
      name: string;
      /** @enum {string|null} */
      color: 'gray' | 'slate' | 'red' | 'orange' | 'amber' | 'green' | 'teal' | 'blue' | 'purple' | 'pink' | null;
      assistants_count: number;
    };
    /**
     * @example {
     *       "name": "Priority"
     *     }
     */
    CreateNamedColourRequest: {
      /**
       * @description Unique within the account, whatever the letter case
       * @example Priority
       */
      name: string;
      /**
       * @description `null` clears it
       * @enum {string|null}
       */
      color?: 'gray' | 'slate' | 'red' | 'orange' | 'amber' | 'green' | 'teal' | 'blue' | 'purple' | 'pink' | null;
    };
    NamedColourMessageEnvelope: {
      message: string;
      data: components['schemas']['NamedColourResponse'];
    };
    /** @example {} */
    UpdateNamedColourRequest: {
      name?: string;
      /**
       * @description `null` clears it
       * @enum {string|null}
       */
      color?: 'gray' | 'slate' | 'red' | 'orange' | 'amber' | 'green' | 'teal' | 'blue' | 'purple' | 'pink' | null;
    };
    CampaignResponse: {
      id: number;
      name: string;
      assistant_id: number | null;
      /** @enum {string} */
      status: 'draft' | 'in-progress' | 'stopped' | 'completed';
      timezone: string;
      phone_number_ids: number[];
      max_calls_in_parallel: number;
      allowed_hours_start_time: string | null;
      allowed_hours_end_time: string | null;
      allowed_days: ('monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday')[];
      max_retries: number;
      retry_interval: number;
      leads_count: number;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    /**
     * @example {
     *       "name": "Spring follow-up",
     *       "assistant_id": 1
     *     }
     */
    CreateCampaignRequest: {
      /**
       * @default UTC
       * @example America/New_York
       */
      timezone?: string;
      /**
       * @description Caller numbers, used in turn; replaces the list
       * @example []
       */
      phone_number_ids?: number[];
      /** @default 3 */
      max_calls_in_parallel?: number;
      /**
       * @description `HH:MM` in the campaign timezone
       * @example 09:00
       */
      allowed_hours_start_time?: string | null;
      /** @example 17:00 */
      allowed_hours_end_time?: string | null;
      /** @description Default: every day */
      allowed_days?: ('monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday')[];
      /** @default 3 */
      max_retries?: number;
      /**
       * @description Minutes between tries
       * @default 60
       */
      retry_interval?: number;
      name: string;
      /**
       * @description An outbound assistant of the account
       * @example 1
       */
      assistant_id: number;
    };
    CampaignMessageEnvelope: {
      data: components['schemas']['CampaignResponse'];
      message: string;
    };
    CampaignEnvelope: {
      data: components['schemas']['CampaignResponse'];
    };
    /** @example {} */
    UpdateCampaignRequest: {
      /**
       * @default UTC
       * @example America/New_York
       */
      timezone?: string;
      /**
       * @description Caller numbers, used in turn; replaces the list
       * @example []
       */
      phone_number_ids?: number[];
      /** @default 3 */
      max_calls_in_parallel?: number;
      /**
       * @description `HH:MM` in the campaign timezone
       * @example 09:00
       */
      allowed_hours_start_time?: string | null;
      /** @example 17:00 */
      allowed_hours_end_time?: string | null;
      /** @description Default: every day */
      allowed_days?: ('monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday')[];
      /** @default 3 */
      max_retries?: number;
      /**
       * @description Minutes between tries
       * @default 60
       */
      retry_interval?: number;
      name?: string;
      /** @example 1 */
      assistant_id?: number;
    };
    ImportLeadsRequest: {
      /**
       * Format: binary
       * @description CSV, at most 20 MB
       */
      file: Blob;
    };
    LeadImportAccepted: {
      id: number;
      /** @enum {string} */
      status: 'pending';
    };
    LeadImportAcceptedResponse: {
      message: string;
      data: components['schemas']['LeadImportAccepted'];
    };
    LeadImportError: {
      /** @description Line of the file (the header is line 1) */
      row: number;
      column: string;
      message: string;
    };
    LeadImportResponse: {
      id: number;
      /** @enum {string} */
      status: 'pending' | 'processing' | 'completed' | 'failed';
      rows_total: number;
      rows_imported: number;
      rows_failed: number;
      /** @description The first 100; all of them as CSV at `.../errors.csv` */
      errors: components['schemas']['LeadImportError'][];
    };
    LeadImportEnvelope: {
      data: components['schemas']['LeadImportResponse'];
    };
    LeadCampaign: {
      id: number;
      name: string;
    };
    SecondaryContactResponse: {
      id: number;
      phone_number: string;
      variables: {
        [key: string]: unknown;
      };
      /** @enum {string} */
      status:
        'created' | 'scheduled' | 'processing' | 'completed' | 'rescheduled' | 'reached-max-retries' | 'blacklisted';
      /** @example 2026-01-02 03:04:05 */
      created_at: string;
      /** @example 2026-01-02 03:04:05 */
      updated_at: string;
    };
    LeadResponse: {
      id: number;
      campaign_id: number;
      phone_number: string;
      variables: {
        [key: string]: unknown;
      };
      /** @enum {string} */
      status:
        'created' | 'scheduled' | 'processing' | 'completed' | 'rescheduled' | 'reached-max-retries' | 'blacklisted';
      /** @example 2026-01-02 03:04:05 */
      created_at: string;
      /** @example 2026-01-02 03:04:05 */
      updated_at: string;
      campaign: components['schemas']['LeadCampaign'];
      secondary_contacts: components['schemas']['SecondaryContactResponse'][];
    };
    SecondaryContactRequest: {
      /** @description E.164 */
      phone_number: string;
      variables?: {
        [key: string]: unknown;
      };
    };
    /**
     * @example {
     *       "phone_number": "+14155550123",
     *       "campaign_id": 1
     *     }
     */
    CreateLeadRequest: {
      /** @description International format; stored as E.164 */
      phone_number: string;
      /** @example 1 */
      campaign_id: number;
      /** @description Text, number or boolean values */
      variables?: {
        [key: string]: unknown;
      };
      secondary_contacts?: components['schemas']['SecondaryContactRequest'][];
      /**
       * @description Allow a number already in the campaign
       * @default false
       */
      allow_duplicate?: boolean;
      /**
       * @deprecated
       * @description Old spelling of `allow_duplicate`, still accepted
       */
      allow_dupplicate?: boolean;
    };
    LeadMessageEnvelope: {
      data: components['schemas']['LeadResponse'];
      message: string;
    };
    LeadEnvelope: {
      data: components['schemas']['LeadResponse'];
    };
    /** @example {} */
    UpdateLeadRequest: {
      phone_number?: string;
      variables?: {
        [key: string]: unknown;
      };
      /** @description Replaces them */
      secondary_contacts?: components['schemas']['SecondaryContactRequest'][];
      /**
       * @description Blacklist a lead, or take it back
       * @enum {string}
       */
      status?: 'blacklisted' | 'created';
    };
    /**
     * @example {
     *       "campaign_id": 1,
     *       "action": "start"
     *     }
     */
    CampaignStatusRequest: {
      /** @example 1 */
      campaign_id: number;
      /** @enum {string} */
      action: 'start' | 'stop';
    };
    CampaignStatusData: {
      campaign_id: number;
      /** @enum {string} */
      status: 'draft' | 'in-progress' | 'stopped' | 'completed';
    };
    CampaignStatusResponse: {
      message: string;
      success: boolean;
      data: components['schemas']['CampaignStatusData'];
    };
    CallSuccessResponse: {
      /** @enum {string} */
      rubric: 'pass_fail' | 'score_1_10' | 'descriptive';
      /** @description `true`/`false` (pass_fail), 1-10 (score_1_10), or `excellent`, `good`, `fair`, `poor` (descriptive) */
      value: boolean | number | ('excellent' | 'good' | 'fair' | 'poor');
      /** @description A pass, a score of 6 or more, or `excellent` or `good`: what the list’s `success` filter reads */
      passed: boolean;
      reason: string;
    };
    CallAnalysisTokensResponse: {
      prompt: number;
      completion: number;
      total: number;
    };
    CallAnalysisResponse: {
      /**
       * @description `pending` until the worker has run it; `done`; `failed` (`error` says why); `skipped`: nothing to analyse (no transcript, or a plan that asks for nothing)
       * @enum {string}
       */
      status: 'pending' | 'done' | 'failed' | 'skipped';
      summary: string | null;
      /** @description The `post_call_schema` fields, each its value or null when the call does not say */
      structured_data: {
        [key: string]: unknown;
      } | null;
      success: components['schemas']['CallSuccessResponse'] | null;
      /** @description The model as the provider named it */
      model: string | null;
      /** @description Spent on this analysis, invalid answers included */
      tokens: components['schemas']['CallAnalysisTokensResponse'] | null;
      /** @description Why it failed or was skipped */
      error: string | null;
      /** @example 2026-01-02 03:04:05 */
      analyzed_at: string | null;
    };
    AssistantRequestOutcome: {
      /**
       * @description `answered`: the server’s answer was applied; `rejected`: the server refused the call; `fallback`: the number’s own assistant answered instead (see `reason`); `pending` while the server is asked
       * @enum {string}
       */
      status: 'pending' | 'answered' | 'rejected' | 'fallback';
      /**
       * @description What happened, for the owner: names the server’s host at most, never its path or a secret
       * @example crm.example.com answered in 48 ms: assistant 12 takes the call, with 2 variables.
       */
      reason: string;
    };
    CallTransferRecord: {
      /**
       * @description The destination’s name
       * @example billing_desk
       */
      destination: string;
      /** @enum {string} */
      mode: 'cold' | 'warm';
      /** @enum {string} */
      status: 'transferred' | 'failed' | 'declined';
      /**
       * @description Why it did not connect
       * @example busy
       */
      reason: string | null;
      /** Format: date-time */
      at: string;
    };
    CallResponse: {
      id: number;
      external_id: string;
      assistant_name: string;
      /** @description Only when the call belongs to a campaign */
      campaign_name?: string;
      lead_id: number | null;
      /** @enum {string} */
      type: 'inbound' | 'outbound' | 'web';
      duration: number;
      /** @description Null for a web call */
      assistant_phone_number: string | null;
      /** @description Null for a web call */
      client_phone_number: string | null;
      /** @enum {string} */
      status:
        | 'initiated'
        | 'ringing'
        | 'busy'
        | 'in-progress'
        | 'ended'
        | 'completed'
        | 'ended_by_customer'
        | 'ended_by_assistant'
        | 'no-answer'
        | 'failed';
      transcript: string;
      variables: {
        [key: string]: unknown;
      };
      evaluation: {
        [key: string]: unknown;
      };
      webhook_response: {
        [key: string]: unknown;
      };
      carrier_cost: number;
      total_cost: number;
      /**
       * @description `unknown` until the voice runtime reports it
       * @enum {string}
       */
      answered_by: 'human' | 'machine' | 'unknown';
      /** @description Only when a recording exists and the call’s assistant records (`record: true`) */
      recording_url?: string;
      /** @description The post-call analysis by the platform’s model provider: null until the call ends, and always without one */
      analysis: components['schemas']['CallAnalysisResponse'] | null;
      /** @description The ring-time hook’s outcome; null when no hook was asked (no `server_url`, or not inbound) */
      assistant_request: components['schemas']['AssistantRequestOutcome'] | null;
      /**
       * @description Why the call ended; null: not said (or not over)
       * @enum {string|null}
       */
      ended_reason:
        | 'customer_hangup'
        | 'assistant_hangup'
        | 'transferred'
        | 'voicemail'
        | 'max_duration'
        | 'owner_hangup'
        | 'error'
        | null;
      /** @description The call’s last transfer and how it went; null: none was tried */
      transfer: components['schemas']['CallTransferRecord'] | null;
      /** @example 2026-01-02 03:04:05 */
      created_at: string;
      /** @example 2026-01-02 03:04:05 */
      updated_at: string;
    };
    CallEnvelope: {
      data: components['schemas']['CallResponse'];
    };
    /**
     * @example {
     *       "phone_number": "+14155550142",
     *       "assistant_id": 1
     *     }
     */
    MakeCallRequest: {
      /**
       * @description E.164: whom to call
       * @example +14155550142
       */
      phone_number: string;
      /**
       * @description An outbound assistant with a phone number
       * @example 1
       */
      assistant_id: number;
      /** @description Text, number or boolean values */
      variables?: {
        [key: string]: unknown;
      };
    };
    MakeCallResponse: {
      /** @example Call initiated successfully. */
      message: string;
      /** @description The call’s id, as in GET /user/calls/{id} */
      call_id: number;
      /** @enum {string} */
      status: 'initiated';
    };
    CallLimitResponse: {
      /** @example The account has reached its limit of 10 calls in progress at once; try again when one ends. */
      message: string;
      /**
       * @description Present when the account’s limit of calls in progress refused the call: that limit (its own, set by an operator, else the deployment’s); absent on the rate limit’s 429
       * @example 10
       */
      max_concurrent_calls?: number;
    };
    ToolCallFailure: {
      /**
       * @description `http_status`: the endpoint answered, not with a success
       * @enum {string}
       */
      code:
        | 'invalid_url'
        | 'unsupported_protocol'
        | 'blocked_address'
        | 'too_many_redirects'
        | 'redirect_refused'
        | 'timeout'
        | 'too_large'
        | 'tls'
        | 'network'
        | 'http_status';
      /**
       * @description Naming the endpoint’s host at most: never its path, query, a header or an argument
       * @example No answer from api.example.com within 10000 ms
       */
      message: string;
    };
    CallEventResponse: {
      /** @enum {string} */
      type: 'transcript' | 'note' | 'tool_call' | 'dtmf' | 'transfer' | 'control';
      /** Format: date-time */
      at: string;
      /** @description transcript and note */
      seq?: number;
      /**
       * @description transcript
       * @enum {string}
       */
      role?: 'assistant' | 'user';
      /** @description transcript and note; control’s `say` and `instruct` */
      text?: string;
      /**
       * @description control: what the owner asked of the live call
       * @enum {string}
       */
      action?: 'hangup' | 'say' | 'instruct';
      /** @description transcript */
      start_ms?: number;
      /** @description transcript */
      end_ms?: number;
      /** @description tool_call */
      tool_id?: number;
      /** @description tool_call */
      name?: string;
      /** @description tool_call */
      arguments?: {
        [key: string]: unknown;
      };
      /** @description tool_call: the endpoint’s HTTP status (null without an answer); transfer: how it went */
      status?: (number | null) | ('transferred' | 'failed' | 'declined');
      /** @description dtmf: the keys, in order */
      digits?: string;
      /**
       * @description dtmf: the caller’s (`inbound`) or the assistant’s
       * @enum {string}
       */
      direction?: 'inbound' | 'outbound';
      /** @description transfer: the destination’s name */
      destination?: string;
      /**
       * @description transfer
       * @enum {string}
       */
      mode?: 'cold' | 'warm';
      /** @description transfer: why it did not connect */
      reason?: string | null;
      /** @description tool_call */
      duration_ms?: number;
      /** @description tool_call: why it failed (no answer, or an answer that is not a success); null when it succeeded; absent from tool calls recorded before it was kept */
      error?: components['schemas']['ToolCallFailure'] | null;
    };
    /**
     * @example {
     *       "text": "One moment please, a colleague will join shortly."
     *     }
     */
    CallControlTextRequest: {
      text: string;
    };
    CallAnalysisQueuedResponse: {
      /** @example The call’s analysis is queued. */
      message: string;
      data: components['schemas']['CallResponse'];
    };
    /**
     * @example {
     *       "variables": {
     *         "customer_name": "Ada"
     *       }
     *     }
     */
    StartWebCallRequest: {
      /**
       * @description The call’s own variables (text, number or boolean), over the assistant’s
       * @example {
       *       "customer_name": "Ada"
       *     }
       */
      variables?: {
        [key: string]: unknown;
      };
    };
    WebCallResponse: {
      /** @description The call: `type: web`, `status: initiated`, no phone numbers */
      call: components['schemas']['CallResponse'];
      /**
       * @description Where the browser connects (LiveKit’s client SDK `room.connect(livekit_url, participant_token)`)
       * @example wss://example.livekit.cloud
       */
      livekit_url: string;
      /**
       * @description The call’s room
       * @example call-0b5f1c3e-8d5a-4a4e-9a43-4a7c1b9f9c6e
       */
      room: string;
      /**
       * @description A LiveKit access token that may join this room only (publish and subscribe, nothing else), as the participant `web-<call id>`; hand it to the browser, never the API key
       * @example eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tSm9pbiI6dHJ1ZX19.c2lnbmF0dXJl
       */
      participant_token: string;
      /**
       * Format: date-time
       * @description Until when the token may be used to join (at most 10 minutes); a joined person stays in the call
       * @example 2026-01-02T03:14:05.000Z
       */
      expires_at: string;
    };
    WebCallEnvelope: {
      /** @example Web call started. */
      message: string;
      data: components['schemas']['WebCallResponse'];
    };
    UsageDay: {
      /**
       * Format: date
       * @description A UTC day
       * @example 2026-01-02
       */
      date: string;
      /** @description Calls created that day */
      calls: number;
      /**
       * @description Their durations, in minutes (two decimals)
       * @example 12.5
       */
      minutes: number;
      /** @description Tokens the model provider spent on post-call analysis */
      llm_tokens: number;
      /** @description Tokens it spent on embeddings (documents and searches) */
      embedding_tokens: number;
    };
    UsageEnvelope: {
      /** @description Every day of the range, oldest first, days without use as zeros */
      data: components['schemas']['UsageDay'][];
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  register: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RegisterRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegisterResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Registration is disabled. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  login: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['LoginRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Invalid input, or the credentials do not match (on `email`) */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  logout: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getCurrentUser: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listApiKeys: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createApiKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateApiKeyRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreateApiKeyResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description API key not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listLanguages: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Every language, ordered by name, as a bare array */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LanguageResponse'][];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getSettings: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SettingsEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateSettings: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateSettingsRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SettingsMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  rotateSettingsServerSecret: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SettingsMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listKnowledgebases: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KnowledgebaseListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createKnowledgebase: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateKnowledgebaseRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KnowledgebaseMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getKnowledgebase: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KnowledgebaseEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateKnowledgebase: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateKnowledgebaseRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KnowledgebaseMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A new language could not start re-indexing; nothing changed, try again */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteKnowledgebase: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  searchKnowledgebase: {
    parameters: {
      query: {
        /** @description Words to look for; any of them may match (stop words ignored), rarer ones and words standing close together rank higher; "quoted phrases" are required, -word and -"phrase" exclude */
        query: string;
        limit?: number;
      };
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Ranked passages, best first */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SearchResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listDocuments: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        knowledgebaseId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DocumentListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createDocument: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path: {
        /** @example 1 */
        knowledgebaseId: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateWebsiteDocumentBody'];
        'multipart/form-data': components['schemas']['CreateFileDocumentBody'];
      };
    };
    responses: {
      /** @description Accepted; processing continues in the background */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreateDocumentResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Processing could not be started; or too many uploads are in progress (with `Retry-After`) (`{error}`), or a dependency is unavailable (`{message}`); retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'] | components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getDocument: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        knowledgebaseId: number;
        /** @example 1 */
        documentId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DocumentEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. / Document not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteDocument: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        knowledgebaseId: number;
        /** @example 1 */
        documentId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. / Document not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  refreshDocument: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        knowledgebaseId: number;
        /** @example 1 */
        documentId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Started; `last_refresh` on the read shows the outcome */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Knowledgebase not found. / Document not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Not a website, or still being processed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The refresh could not be started; try again */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
    };
  };
  listTools: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolResponse'][];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createTool: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateToolRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Tool not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateToolRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Tool not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Tool not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  testTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TestToolRequest'];
      };
    };
    responses: {
      /** @description Sent; a failure to get an answer is in `error` */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolTestEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Tool not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Arguments do not match the tool schema (on `arguments.<name>`) */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listSipTrunks: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SipTrunkListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createSipTrunk: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateSipTrunkRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SipTrunkMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Failed to create SIP trunk. Please try again or contact support. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description Failed to create SIP trunk. Please try again or contact support. (`{error}`), or a dependency is unavailable (`{message}`); retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'] | components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getSipTrunk: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SipTrunkEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description SIP trunk not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateSipTrunk: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateSipTrunkRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SipTrunkMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description SIP trunk not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Failed to update SIP trunk. Please try again or contact support. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description Failed to update SIP trunk. Please try again or contact support. (`{error}`), or a dependency is unavailable (`{message}`); retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'] | components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listSmsPhoneNumbers: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PhoneNumberListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listPhoneNumbers: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PhoneNumberListResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updatePhoneNumber: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdatePhoneNumberRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PhoneNumberMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Phone number not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deletePhoneNumber: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Phone number not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  rotatePhoneNumberServerSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PhoneNumberMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Phone number not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorFieldResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listAssistants: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
        /** @description Only assistants in this folder */
        folder_id?: number;
        /** @description Only assistants with this label */
        label_id?: number;
        /** @description Part of the name, any letter case */
        search?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LengthAwarePageMeta'] & {
            data: components['schemas']['AssistantResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createAssistant: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateAssistantRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AssistantMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getAssistant: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AssistantEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Assistant not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateAssistant: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateAssistantRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AssistantMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Assistant not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteAssistant: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Assistant not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  rotateWebhookSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AssistantMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Assistant not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listFolders: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SlimPageMeta'] & {
            data: components['schemas']['NamedColourResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createFolder: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateNamedColourRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['NamedColourMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateFolder: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateNamedColourRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['NamedColourMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Folder not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteFolder: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Folder not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listLabels: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SlimPageMeta'] & {
            data: components['schemas']['NamedColourResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createLabel: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateNamedColourRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['NamedColourMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateLabel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateNamedColourRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['NamedColourMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Label not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteLabel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Label not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listCampaigns: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LengthAwarePageMeta'] & {
            data: components['schemas']['CampaignResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createCampaign: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateCampaignRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CampaignMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getCampaign: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CampaignEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Campaign not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateCampaign: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateCampaignRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CampaignMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Campaign not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteCampaign: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Campaign not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  importLeads: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'multipart/form-data': components['schemas']['ImportLeadsRequest'];
      };
    };
    responses: {
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LeadImportAcceptedResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Campaign not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getLeadImport: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
        /** @example 1 */
        importId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LeadImportEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Lead import not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  downloadLeadImportErrors: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
        /** @example 1 */
        importId: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description row,column,message */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/csv': string;
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Lead import not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listLeads: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
        status?:
          'created' | 'scheduled' | 'processing' | 'completed' | 'rescheduled' | 'reached-max-retries' | 'blacklisted';
        campaign_id?: number;
        /** @description Part of the number */
        phone_number?: string;
        /** @description Created on or after (UTC) */
        date_from?: string;
        /** @description Created on or before (UTC) */
        date_to?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LengthAwarePageMeta'] & {
            data: components['schemas']['LeadResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  createLead: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateLeadRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LeadMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getLead: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LeadEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Lead not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteLead: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Lead not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateLead: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['UpdateLeadRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LeadMessageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Lead not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  updateCampaignStatus: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CampaignStatusRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CampaignStatusResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Campaign not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Invalid input, or the campaign cannot be started or stopped now (on `campaign_id`) */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listCalls: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
        status?:
          | 'initiated'
          | 'ringing'
          | 'busy'
          | 'in-progress'
          | 'ended'
          | 'completed'
          | 'ended_by_customer'
          | 'ended_by_assistant'
          | 'no-answer'
          | 'failed';
        type?: 'inbound' | 'outbound' | 'web';
        /** @description Part of the client's number */
        phone_number?: string;
        assistant_id?: number;
        campaign_id?: number;
        date_from?: string;
        date_to?: string;
        /** @description Only calls whose analysis graded them a success (`true`) or not (`false`): a pass, a score of 6 or more, `excellent` or `good`; calls without a grade are in neither */
        success?: boolean;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LengthAwarePageMeta'] & {
            data: components['schemas']['CallResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  deleteCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  makeCall: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['MakeCallRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MakeCallResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description The account has as many calls in progress as it may; nothing was placed, try again when one ends (with `max_concurrent_calls`); or Too Many Attempts. (without it) */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallLimitResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  listCallEvents: {
    parameters: {
      query?: {
        page?: number;
        per_page?: number;
      };
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LengthAwarePageMeta'] & {
            data: components['schemas']['CallEventResponse'][];
          };
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  watchCallEvents: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The stream (`text/event-stream`), open until the call ends */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call has ended (and no `Last-Event-ID` was sent) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description `Last-Event-ID` is not an event id */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description The account has too many live streams open */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description This API process holds all the streams it may, or is shutting down: reconnect after `Retry-After` */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  hangUpCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description On its way to the call’s runtime */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call has already ended */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  sayInCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CallControlTextRequest'];
      };
    };
    responses: {
      /** @description On its way to the call’s runtime */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call has already ended */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  instructCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CallControlTextRequest'];
      };
    };
    responses: {
      /** @description On its way to the call’s runtime */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call has already ended */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  reanalyseCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Queued: the call, its `analysis` pending; `call.analyzed` follows when it settles */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallAnalysisQueuedResponse'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Call not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call has not ended, has no transcript, or no model provider is configured */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  startWebCall: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retrying with the same key and body within 24 hours returns the first answer (with `Idempotent-Replayed: true`) instead of creating again. */
        'Idempotency-Key'?: string;
      };
      path: {
        /** @example 1 */
        id: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['StartWebCallRequest'];
      };
    };
    responses: {
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebCallEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Assistant not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A request with this Idempotency-Key is still being processed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The given data was invalid. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description The account has as many calls in progress as it may; nothing was started, try again when one ends (with `max_concurrent_calls`); or Too Many Attempts. (without it) */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallLimitResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The telephony provider could not open the room; nothing was started (no call, no slot taken) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
  getUsage: {
    parameters: {
      query?: {
        /** @description The first day (UTC); default: 30 days up to `date_to` */
        date_from?: string;
        /** @description The last day (UTC), at most 366 days after `date_from`; default: today */
        date_to?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UsageEnvelope'];
        };
      };
      /** @description The body could not be parsed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Unauthenticated. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The body is too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A query parameter is invalid */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationErrorResponse'];
        };
      };
      /** @description Too Many Attempts. */
      429: {
        headers: {
          /** @description Seconds to wait before retrying */
          'Retry-After'?: number;
          /** @description Requests allowed per minute */
          'X-RateLimit-Limit'?: number;
          /** @description Requests left in this minute */
          'X-RateLimit-Remaining'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Server Error. */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description A dependency is unavailable; retry later */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
    };
  };
}
