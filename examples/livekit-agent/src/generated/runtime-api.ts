// Generated from the runtime API’s OpenAPI document (/api/internal/docs-json) by `npm run agent:generate`
// (openapi-typescript); do not edit.

export interface paths {
  '/api/internal/calls/{externalId}/session': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Open a call’s session: the assistant to run, its tools and knowledgebase, and a call token (201 first) */
    post: operations['openCallSession'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/knowledge': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Search the call’s assistant’s knowledgebase, as the user search answers */
    get: operations['searchCallKnowledge'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/tools/{toolId}/invoke': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Call one of the assistant’s tools; the endpoint’s answer, or why none came, within the tool’s timeout */
    post: operations['invokeCallTool'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Record transcript turns and notes, idempotent on their seq, in any order, a batch all or nothing
     * @description At most 100 events a request; a longer list is refused for its size alone. An event already recorded under its `seq` with the same content is a duplicate (counted in `duplicates`); with other content the whole batch is refused (409) and none of it stored. `at` must fall within the call’s life, five minutes either side for clocks that differ: from its creation to its end, or to now while it runs. Once the call’s status is final a call token is refused (401).
     */
    post: operations['recordCallEvents'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/control': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The owner’s control of the call (hang up, say, instruct) as server-sent events, until the call ends
     * @description Hold this stream open for the whole call. Each message is an event `control` whose `id` is the message’s and whose `data` is a `CallControlMessage`: `hangup` (end the call now, then write its final status; unconfirmed after 5 seconds, the service ends it at the provider), `say` (speak `text` as it is) or `instruct` (add `text` to the model’s context). Reconnect with `Last-Event-ID` (as EventSource does) to get what was asked meanwhile, nothing twice. A comment line every 15 seconds keeps the connection open; the call’s final write ends the stream with an `end` event.
     */
    get: operations['followCallControl'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/transfer': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Transfer the caller to one of the assistant’s destinations, by name; answers how it went
     * @description Only a destination of the call’s assistant (422 otherwise: a model never dials a number of its own). The telephony provider hands the phone call over (LiveKit `TransferSIPParticipant`) and the answer comes once it has: `transferred` (the call leaves the room; end the session, and write the call `ended`), or `failed` / `declined` with a `reason` and a `message` the assistant can say, the caller still on the line. The call records it (`transfer`, an event, `ended_reason: transferred`).
     */
    post: operations['transferCall'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}/transfer/briefed': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * The assistant in a warm transfer’s consultation room has briefed the person: join them to the caller
     * @description A warm transfer rings the person into a consultation room with the agent dispatched there (its job metadata `{external_id, consultation: {destination, summary}}`). Once the agent has told the person about the call, it posts this, and the transfer joins the person to the caller; without it the transfer joins them after `TRANSFER_BRIEFING_TIMEOUT_SECONDS` anyway.
     */
    post: operations['transferBriefed'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/internal/calls/{externalId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /**
     * Create or update a call by the runtime’s id (201 first, 200 after)
     * @description The first write creates the call from `assistant_id`, `type`, `status` and both numbers; a later write gives only what changed and keeps the rest (`variables` merge into the call’s key by key). A call token cannot name another assistant, campaign or lead than its call’s (422 on the field), and once the call’s status is final it may only repeat a write that changes nothing: 200 with the call as it is, anything else 401. The deployment’s token may still write to a finished call, and move a call to another assistant of its account.
     */
    put: operations['ingestCall'];
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
    LanguageResponse: {
      /** @example 1 */
      id: number;
      /** @example English */
      name: string;
      /** @example en */
      iso_2: string;
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
    EndCallSettingsResponse: {
      enabled: boolean;
      message: string | null;
    };
    VoicemailSettingsResponse: {
      /** @enum {string} */
      action: 'hangup' | 'leave_message';
      message: string | null;
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
    CallLimitResponse: {
      /** @example The account has reached its limit of 10 calls in progress at once; try again when one ends. */
      message: string;
      /**
       * @description Present when the account’s limit of calls in progress refused the call: that limit (its own, set by an operator, else the deployment’s); absent on the rate limit’s 429
       * @example 10
       */
      max_concurrent_calls?: number;
    };
    /**
     * @example {
     *       "type": "outbound",
     *       "client_phone_number": "+14155550123",
     *       "assistant_phone_number": "+14155550100",
     *       "assistant_id": 1
     *     }
     */
    CallSessionRequest: {
      /** @enum {string} */
      type: 'inbound' | 'outbound' | 'web';
      /**
       * @description The caller, or the callee; required for a call the service has not placed. Stored in E.164 when it reads as a valid number (international, or national in the country of the call’s own number), else as sent
       * @example +14155550123
       */
      client_phone_number?: string;
      /**
       * @description The dialled number of an inbound call, in any form a carrier writes it (`+1 (415) 555-0142`, `14155550142`, `4155550142` in the country of the number dialled): finds the assistant, and the call keeps the number as stored (E.164); or the number calling out. Required for a call the service has not placed
       * @example +14155550100
       */
      assistant_phone_number?: string;
      /**
       * @description For a call the service did not place and that no number routes (a web call)
       * @example null
       */
      assistant_id?: number | null;
      /** @example null */
      campaign_id?: number | null;
      /** @example null */
      lead_id?: number | null;
      /** @description The call’s own variables (text, number or boolean), over the lead’s and the assistant’s */
      variables?: {
        [key: string]: unknown;
      };
    };
    SessionAssistant: {
      id: number;
      name: string;
      /** @enum {string} */
      type: 'inbound' | 'outbound';
      language: components['schemas']['LanguageResponse'];
      secondary_languages: components['schemas']['LanguageResponse'][];
      voice_id: string | null;
      /** @description null: the runtime’s own LLM */
      model: components['schemas']['ModelSettingsResponse'] | null;
      /** @description null: the runtime’s own speech-to-text */
      transcriber: components['schemas']['TranscriberSettingsResponse'] | null;
      /** @description null: the runtime’s own text-to-speech, speaking `voice_id` when set */
      voice: components['schemas']['VoiceSettingsResponse'] | null;
      /** @example Europe/Berlin */
      timezone: string;
      /** @description Spoken first; `{{variables}}` already filled in */
      initial_message: string | null;
      /** @description `{{variables}}` already filled in */
      system_prompt: string | null;
      /** @description Seconds; the runtime ends the call then */
      max_duration: number;
      record: boolean;
      /** @description The assistant’s variables, then the lead’s, then the call’s: a later one wins */
      variables: {
        [key: string]: unknown;
      };
      /** @description What to extract from the call when it ends, for the final write’s `evaluation` (the service also extracts it itself into the call’s `analysis.structured_data` when a model provider is configured) */
      post_call_schema: {
        name: string;
        /** @enum {string} */
        type: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'array';
        description: string;
        /** @description With `type: enum`: the values it takes */
        values?: string[];
        /** @description With `type: array`: what it lists */
        items?: {
          /** @enum {string} */
          type?: 'string' | 'number' | 'integer' | 'boolean' | 'enum';
          values?: string[];
        };
      }[];
    };
    SessionTool: {
      id: number;
      /** @example check_order */
      name: string;
      description: string;
      /**
       * @description The arguments as JSON Schema (an object of named properties); what the invoke route checks
       * @example {
       *       "type": "object",
       *       "properties": {
       *         "order_id": {
       *           "type": "string",
       *           "description": "The order number"
       *         }
       *       },
       *       "required": [
       *         "order_id"
       *       ],
       *       "additionalProperties": false
       *     }
       */
      parameters: {
        [key: string]: unknown;
      };
    };
    SessionTransferDestination: {
      /** @example billing_desk */
      name: string;
      description: string;
      /** @enum {string} */
      mode: 'cold' | 'warm';
      /** @description Said to the caller before the transfer */
      message: string | null;
    };
    SessionAction: {
      /**
       * @description The function name offered to the model
       * @example transfer_call
       */
      name: string;
      /** @enum {string} */
      type: 'transfer_call' | 'end_call' | 'send_dtmf';
      description: string;
      /** @description The arguments as JSON Schema, as a tool’s `parameters` */
      parameters: {
        [key: string]: unknown;
      };
      /** @description `transfer_call`: where the call may go, by name (the numbers stay with the service) */
      destinations?: components['schemas']['SessionTransferDestination'][];
      /** @description `end_call`: the goodbye to say first */
      message?: string | null;
    };
    SessionKnowledgebase: {
      id: number;
      name: string;
    };
    CallSession: {
      call: components['schemas']['CallResponse'];
      /**
       * @description For this call’s knowledge, tools, events and final write only; shown once
       * @example vrc_4Jd9...
       */
      token: string;
      /**
       * Format: date-time
       * @description The call’s `max_duration` and ten minutes on
       */
      expires_at: string;
      assistant: components['schemas']['SessionAssistant'];
      tools: components['schemas']['SessionTool'][];
      /** @description Built-in actions to offer the model beside the tools: `transfer_call` (with the assistant’s destinations; done through `POST .../transfer`), `end_call` (when the assistant may end the call) and `send_dtmf` (keys pressed in the room, reported as `dtmf` events) */
      actions: components['schemas']['SessionAction'][];
      /** @description Whether the assistant may end the call, and its goodbye */
      end_call: components['schemas']['EndCallSettingsResponse'];
      /** @description What to do when a machine answers; the message’s `{{variables}}` already filled in */
      voicemail: components['schemas']['VoicemailSettingsResponse'];
      knowledgebase: components['schemas']['SessionKnowledgebase'] | null;
    };
    CallSessionEnvelope: {
      data: components['schemas']['CallSession'];
    };
    CallRejection: {
      /**
       * @description What the runtime says to the caller before it hangs up; null: hang up without a word
       * @example Sorry, we cannot take your call. Goodbye.
       */
      message: string | null;
    };
    CallRejectedResponse: {
      /** @example The owner’s server refused the call. */
      message: string;
      reject: components['schemas']['CallRejection'];
    };
    /** @example {} */
    InvokeToolRequest: {
      /** @description What the model filled in, checked against the tool’s parameters; a name they lack is refused */
      arguments?: {
        [key: string]: unknown;
      };
    };
    ToolInvocation: {
      /** @description The endpoint’s HTTP status; null without an answer */
      status: number | null;
      /** @description Parsed JSON when the answer is a complete JSON object or array, else its text (at most 64 KB); null without an answer */
      body:
        | {
            [key: string]: unknown;
          }
        | unknown[]
        | (string | null);
      duration_ms: number;
      /** @description Why no answer came, naming the endpoint’s host at most (never its path, query or a header): for logs and the tool’s owner, not to be put before the person on the call */
      error: string | null;
      /**
       * @description The kind of failure when no answer came: what a runtime may act on (tell the caller the look-up failed, in its own words)
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
    ToolInvocationEnvelope: {
      data: components['schemas']['ToolInvocation'];
    };
    RuntimeEvent: {
      /** @description The runtime’s order of events in the call; unique */
      seq: number;
      /** @enum {string} */
      type: 'transcript' | 'note' | 'dtmf';
      /**
       * Format: date-time
       * @example 2026-01-02T03:04:05.678Z
       */
      at: string;
      /**
       * @description Required for a transcript turn; a note has none
       * @enum {string}
       */
      role?: 'assistant' | 'user';
      /** @description Required for a turn and a note */
      text?: string;
      /**
       * @description `dtmf`: the keys pressed (0-9, *, #, A-D; `w` a pause), in order
       * @example 1#
       */
      digits?: string;
      /**
       * @description `dtmf`: `inbound` the caller pressed them, `outbound` the assistant sent them
       * @enum {string}
       */
      direction?: 'inbound' | 'outbound';
      /** @description Milliseconds from the call’s start */
      start_ms?: number;
      /** @description Milliseconds from the call’s start; not before `start_ms` */
      end_ms?: number;
    };
    /**
     * @example {
     *       "events": [
     *         {
     *           "seq": 1,
     *           "type": "transcript",
     *           "role": "assistant",
     *           "text": "Hello!",
     *           "at": "2026-01-02T03:04:05.678Z"
     *         }
     *       ]
     *     }
     */
    RuntimeEventsRequest: {
      /**
       * @example [
       *       {
       *         "seq": 1,
       *         "type": "transcript",
       *         "role": "assistant",
       *         "text": "Hello!",
       *         "at": "2026-01-02T03:04:05.678Z"
       *       }
       *     ]
       */
      events: components['schemas']['RuntimeEvent'][];
    };
    RuntimeEventsReceipt: {
      /** @description Events stored by this request */
      recorded: number;
      /** @description Events whose `seq` the call already had (kept as first sent) */
      duplicates: number;
    };
    RuntimeEventsEnvelope: {
      /** @example Events recorded. */
      message: string;
      data: components['schemas']['RuntimeEventsReceipt'];
    };
    /**
     * @example {
     *       "destination": "billing_desk"
     *     }
     */
    TransferCallRequest: {
      /**
       * @description A destination’s `name`
       * @example billing_desk
       */
      destination: string;
      /** @description The caller’s participant in the room; the room’s phone participant when absent */
      participant_identity?: string;
      /** @description Warm transfers: what the assistant tells the person before they are joined (a summary of the call) */
      summary?: string | null;
    };
    CallTransferResponse: {
      id: number;
      /** @example billing_desk */
      destination: string;
      /** @enum {string} */
      mode: 'cold' | 'warm';
      /**
       * @description `transferred`: the caller is with the person, the call is over for the assistant; `failed` or `declined`: the caller is still with the assistant, which says `message`
       * @enum {string}
       */
      status: 'transferred' | 'failed' | 'declined';
      /**
       * @description Why it did not connect: busy, no-answer, declined, unreachable, refused, caller-gone, …
       * @example busy
       */
      reason: string | null;
      /**
       * @description What the assistant can say
       * @example The line is busy.
       */
      message: string | null;
    };
    CallTransferData: {
      transfer: components['schemas']['CallTransferResponse'];
    };
    CallTransferEnvelope: {
      /** @example The call was transferred. */
      message: string;
      data: components['schemas']['CallTransferData'];
    };
    /**
     * @example {
     *       "assistant_id": 1,
     *       "type": "outbound",
     *       "status": "completed",
     *       "client_phone_number": "+14155550123",
     *       "assistant_phone_number": "+14155550100",
     *       "duration": 42
     *     }
     */
    IngestCallRequest: {
      /**
       * @description Required on the first write; a later write that leaves it out keeps the call’s. A call token cannot name another assistant than the call’s (422)
       * @example 1
       */
      assistant_id?: number;
      /**
       * @description Required on the first write; a later write that leaves it out keeps the call’s
       * @enum {string}
       */
      type?: 'inbound' | 'outbound' | 'web';
      /**
       * @description Required on the first write; a later write that leaves it out keeps the call’s. Only moves forward; a final one never changes (409)
       * @enum {string}
       */
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
      /** @description Required on the first write; a later write that leaves it out keeps the call’s. Stored in E.164 when it reads as a valid number (international, or national in the country of the call’s own number), else as sent (a SIP extension, `anonymous`) */
      client_phone_number?: string;
      /** @description Required on the first write; a later write that leaves it out keeps the call’s. Stored in E.164 when it reads as a valid number (international, or national in the country of the call’s own number), else as sent (a SIP extension, `anonymous`) */
      assistant_phone_number?: string;
      /**
       * @description Null or left out keeps the call’s. A call token cannot name another campaign than the call’s (422)
       * @example null
       */
      campaign_id?: number | null;
      /**
       * @description Null or left out keeps the call’s. A call token cannot name another lead than the call’s (422)
       * @example null
       */
      lead_id?: number | null;
      /** @description Seconds */
      duration?: number;
      /** @description On a final write, left out or null: the call’s transcript turns joined in `seq` order (`Assistant: ...`, `Customer: ...` lines); the call’s transcript is kept when it has none */
      transcript?: string | null;
      /** @description Merged into the call’s variables key by key (a later write adds and replaces keys, never removes one) */
      variables?: {
        [key: string]: unknown;
      };
      evaluation?: {
        [key: string]: unknown;
      };
      carrier_cost?: number;
      total_cost?: number;
      /** @enum {string} */
      answered_by?: 'human' | 'machine' | 'unknown';
      /**
       * @description Why the call ended (`assistant_hangup` when the assistant ended it with `end_call`); a transferred call keeps `transferred`
       * @enum {string}
       */
      ended_reason?:
        | 'customer_hangup'
        | 'assistant_hangup'
        | 'transferred'
        | 'voicemail'
        | 'max_duration'
        | 'owner_hangup'
        | 'error';
      /** Format: uri */
      recording_url?: string;
    };
    IngestCallResponse: {
      message: string;
      data: components['schemas']['CallResponse'];
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
  openCallSession: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CallSessionRequest'];
      };
    };
    responses: {
      /** @description The call existed (placed by the service, or a retry) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallSessionEnvelope'];
        };
      };
      /** @description The call is new */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallSessionEnvelope'];
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The owner’s ring-time hook refused the inbound call: say `reject.message` (when not null) and hang up. The call is recorded as ended; every later session of it answers the same */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallRejectedResponse'];
        };
      };
      /** @description No assistant answers this number. */
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
      /** @description A new call beyond its account’s limit of calls in progress: nothing was recorded; refuse the caller politely and hang up (trying again does not help the caller on the line) (with `max_concurrent_calls`); or Too Many Attempts. (without it) */
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
  searchCallKnowledge: {
    parameters: {
      query: {
        /** @description Words to look for; any of them may match (stop words ignored), rarer ones and words standing close together rank higher; "quoted phrases" are required, -word and -"phrase" exclude */
        query: string;
        limit?: number;
      };
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Ranked passages, best first; none without a knowledgebase */
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
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
  invokeCallTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
        /** @example 1 */
        toolId: number;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['InvokeToolRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolInvocationEnvelope'];
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Tool not found (or not the call’s assistant’s), or call not found. */
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
      /** @description An argument breaks the tool’s schema */
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
  recordCallEvents: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RuntimeEventsRequest'];
      };
    };
    responses: {
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RuntimeEventsEnvelope'];
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
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
      /** @description An event of the batch has other content than the one recorded under its seq (none is stored) */
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
      /** @description An event is invalid (a note with a `role`, `end_ms` before `start_ms`, `at` outside the call’s life, a seq twice with other content), or the list is over 100; nothing is stored */
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
  followCallControl: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The stream (`text/event-stream`) of `CallControlMessage`s, open until the call ends */
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
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
      /** @description `Last-Event-ID` is not an event id */
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
  transferCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TransferCallRequest'];
      };
    };
    responses: {
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CallTransferEnvelope'];
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
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
      /** @description The call has already ended, was already transferred, or another transfer of it is under way */
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
      /** @description `destination` is not one of the assistant’s */
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
      /** @description The telephony provider failed; the caller is still with the assistant, the failure recorded */
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
  transferBriefed: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The transfer goes on */
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
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
      /** @description No transfer of the call is under way */
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
  ingestCall: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The runtime’s own id of the call: its room’s name at the provider */
        externalId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['IngestCallRequest'];
      };
    };
    responses: {
      /** @description A later write, or a call token’s repeat of the final one */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IngestCallResponse'];
        };
      };
      /** @description First write of this call */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IngestCallResponse'];
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
      /** @description Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose status is final (which it may use only to repeat the final write) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description Not found. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description The call already has another final status, or belongs to another account than the assistant */
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
      /** @description Invalid data, a field the first write needs, or (with a call token) another assistant, campaign or lead */
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
