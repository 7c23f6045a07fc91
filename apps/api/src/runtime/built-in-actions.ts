import {
  DEFAULT_END_CALL,
  DEFAULT_VOICEMAIL,
  type SessionAction,
  type StoredEndCallSettings,
  type StoredTransferDestination,
  type StoredVoicemailSettings,
} from '@app/contracts';
import { fillVariables } from './call-variables';

/** Keys a DTMF action may press: the twelve keys of a phone's pad, and `w` for a half-second pause. */
export const DTMF_DIGITS_PATTERN = '^[0-9*#wW]{1,64}$';

/**
 * The actions the runtime offers its model beside the assistant's tools: a transfer to one of the assistant's
 * destinations (by name only: the numbers stay with the service, which dials them), ending the call when the
 * assistant may, and pressing keys on an automated menu. Transfers and ending go through the service; keys are
 * pressed by the runtime in the call's room and reported as `dtmf` events.
 */
export function builtInActions(assistant: {
  transfer_destinations: StoredTransferDestination[];
  end_call: StoredEndCallSettings | null;
}): SessionAction[] {
  const actions: SessionAction[] = [];
  const destinations = assistant.transfer_destinations;
  if (destinations.length > 0) {
    actions.push({
      name: 'transfer_call',
      type: 'transfer_call',
      description:
        'Transfer the caller to a person or another line. Destinations: ' +
        destinations.map((destination) => `${destination.name} (${destination.description})`).join('; '),
      parameters: {
        type: 'object',
        properties: {
          destination: {
            type: 'string',
            enum: destinations.map((destination) => destination.name),
            description: 'Where to transfer the call',
          },
          summary: { type: 'string', description: 'For a warm transfer: what to tell the person about the call' },
        },
        required: ['destination'],
        additionalProperties: false,
      },
      destinations: destinations.map(({ name, description, mode, message }) => ({ name, description, mode, message })),
    });
  }
  const endCall = assistant.end_call ?? DEFAULT_END_CALL;
  if (endCall.enabled) {
    actions.push({
      name: 'end_call',
      type: 'end_call',
      description: 'End the call when the conversation is over and the caller has nothing more to ask.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      message: endCall.message,
    });
  }
  actions.push({
    name: 'send_dtmf',
    type: 'send_dtmf',
    description: 'Press keys on the phone, to navigate an automated menu (IVR): digits 0-9, * and #.',
    parameters: {
      type: 'object',
      properties: { digits: { type: 'string', pattern: DTMF_DIGITS_PATTERN, description: 'The keys, in order' } },
      required: ['digits'],
      additionalProperties: false,
    },
  });
  return actions;
}

/** The voicemail setting as the runtime follows it, its message's `{{variables}}` filled in. */
export function sessionVoicemail(
  voicemail: StoredVoicemailSettings | null,
  variables: Record<string, unknown>,
): StoredVoicemailSettings {
  const setting = voicemail ?? DEFAULT_VOICEMAIL;
  return { action: setting.action, message: fillVariables(setting.message, variables) };
}
