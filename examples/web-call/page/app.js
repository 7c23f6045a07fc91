// The page: starts a web call through its server, joins the call's LiveKit room with the microphone, plays the
// assistant, shows the conversation as the service records it, and hangs up.
import { Room, RoomEvent, Track } from 'livekit-client';

const startButton = document.getElementById('start');
const hangupButton = document.getElementById('hangup');
const status = document.getElementById('status');
const transcript = document.getElementById('transcript');
const live = document.getElementById('live');

let call;

function say(text) {
  status.textContent = text;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message ?? `HTTP ${response.status}`);
  return answer;
}

/** The call's turns, from the service's event stream (relayed by the page's server), one line each. */
function follow(callId) {
  const events = new EventSource(`/calls/${encodeURIComponent(callId)}/events`);
  events.addEventListener('transcript', (message) => {
    const turn = JSON.parse(message.data);
    const line = document.createElement('li');
    line.className = turn.role;
    const who = document.createElement('b');
    who.textContent = turn.role === 'user' ? 'You' : 'Assistant';
    line.append(who, turn.text);
    transcript.append(line);
  });
  events.addEventListener('end', () => events.close());
  return events;
}

function end(message) {
  live.textContent = '';
  call?.events?.close();
  call?.room?.disconnect();
  call = undefined;
  startButton.disabled = false;
  hangupButton.disabled = true;
  say(message);
}

startButton.addEventListener('click', async () => {
  startButton.disabled = true;
  transcript.replaceChildren();
  say('Starting the call...');
  let started;
  try {
    started = await post('/calls', {});
    const room = new Room({ adaptiveStream: true });
    call = { id: started.id, room, events: follow(started.id) };
    hangupButton.disabled = false;
    room.on(RoomEvent.TrackSubscribed, (track) => {
      if (track.kind === Track.Kind.Audio) document.body.append(track.attach());
    });
    // What is being said right now, word by word: the agent framework's transcription text streams (its own speech and
    // the caller's), shown until the turn is stored and arrives on the event stream above.
    room.registerTextStreamHandler('lk.transcription', async (reader, participant) => {
      const who = participant.identity === room.localParticipant.identity ? 'You' : 'Assistant';
      let text = '';
      for await (const chunk of reader) {
        text += chunk;
        live.textContent = `${who}: ${text}`;
      }
    });
    room.on(RoomEvent.Disconnected, () => {
      if (call?.room === room) end('The call has ended.');
    });
    say(`Connecting to room ${started.room}...`);
    await room.connect(started.livekit_url, started.token);
    await room.localParticipant.setMicrophoneEnabled(true);
    say('Connected: speak to your assistant.');
  } catch (error) {
    // A call the service started but this page could not join is ended there too, not left to run out.
    end(`Could not start the call: ${error.message}`);
    if (started) await post(`/calls/${encodeURIComponent(started.id)}/hangup`).catch(() => {});
  }
});

hangupButton.addEventListener('click', async () => {
  const id = call?.id;
  hangupButton.disabled = true;
  say('Hanging up...');
  try {
    if (id) await post(`/calls/${encodeURIComponent(id)}/hangup`);
    end('You hung up.');
  } catch (error) {
    end(`Hung up here; the service said: ${error.message}`);
  }
});
