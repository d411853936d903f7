/** Transcribe: an upload through POST /v1/audio/transcribe, read along with playback. */
import { Fragment } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { toSrt, toVtt, type Transcript, type TranscriptSegment as Segment } from '../../src/operations/transcribe/formats';
import { runOperation, type Capabilities, type Job, type Voice } from './api';
import { AudioInput, clock, ErrorMessage, Field, fieldId, invalidIf, JobChoice, JobProgress, speakerColours } from './fields';
import { LiveTranscription } from './live';
import { saveText, useAction, useObjectUrl } from './hooks';

const form = 'transcribe';

const percent = (fraction: number): string => `${Math.round(fraction * 100)}%`;

/** Consecutive segments of one speaker, shown as one turn. */
function turns(segments: Segment[]): Segment[][] {
  const result: Segment[][] = [];
  for (const segment of segments) {
    const last = result.at(-1);
    if (last && last[0]!.speaker === segment.speaker) last.push(segment);
    else result.push([segment]);
  }
  return result;
}

function TranscriptView({
  transcript,
  currentSeconds,
  seek,
}: {
  transcript: Transcript;
  currentSeconds: number;
  seek: (seconds: number) => void;
}) {
  const speakerIndex = new Map(transcript.speakers.map((s, i) => [s.id, i % speakerColours]));
  // The word being spoken: the last one started (words are in time order), kept lit through the short pause after it.
  const words = transcript.segments.flatMap((s) => s.words ?? []);
  const current = words.findLast((w) => w.start <= currentSeconds && currentSeconds < w.end + 0.5);
  return (
    <div class="transcript">
      {turns(transcript.segments).map((turn) => {
        const speaker = turn[0]!.speaker;
        const name = turn[0]!.speaker_name;
        return (
          <div key={turn[0]!.id} class={`turn${speaker === null ? '' : ` speaker-${speakerIndex.get(speaker) ?? 0}`}`}>
            {speaker !== null && <p class="speaker">{name ? `${name} (${speaker})` : speaker}</p>}
            {turn.map((segment) => (
              <p key={segment.id} class="segment">
                <button type="button" class="time" onClick={() => seek(segment.start)} aria-label={`Play from ${clock(segment.start)}`}>
                  {clock(segment.start)}
                </button>{' '}
                {(
                  segment.words ?? [{ word: segment.text, start: segment.start, end: segment.end, confidence: segment.confidence, speaker }]
                ).map((word) => (
                  // A space between words, so the transcript copies as text. Out of the tab order (a long transcript would
                  // be hundreds of stops): the time buttons seek by keyboard.
                  <Fragment key={`${word.start}-${word.word}`}>
                    <button
                      type="button"
                      tabIndex={-1}
                      class="word"
                      style={{ '--confidence': word.confidence }}
                      title={`${clock(word.start)} · confidence ${percent(word.confidence)}`}
                      aria-current={word === current ? 'true' : undefined}
                      onClick={() => seek(word.start)}
                    >
                      {word.word.trim()}
                    </button>{' '}
                  </Fragment>
                ))}
              </p>
            ))}
          </div>
        );
      })}
    </div>
  );
}

export function Transcribe({ capabilities, voices }: { capabilities: Capabilities | null; voices: Voice[] }) {
  const [file, setFile] = useState<File | null>(null);
  const [fileUrl, setFileBlob] = useObjectUrl();
  const [language, setLanguage] = useState('auto');
  const [diarize, setDiarize] = useState(false);
  const [numSpeakers, setNumSpeakers] = useState('');
  const [speakerVoiceIds, setSpeakerVoiceIds] = useState<string[]>([]);
  // Built-in voices have no reference recording to match a speaker against.
  const profiles = voices.filter((v) => v.type === 'cloned');
  const [asJob, setAsJob] = useState(false);
  const [job, setJob] = useState<Job | null>(null);
  const transcription = useAction();
  const [transcript, setTranscript] = useState<Transcript | null>(null);
  const [currentSeconds, setCurrentSeconds] = useState(0);
  const audio = useRef<HTMLAudioElement>(null);

  const choose = ([chosen]: File[]) => {
    setFile(chosen ?? null);
    setFileBlob(chosen ?? null);
    setTranscript(null);
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void transcription.run(async () => {
      setTranscript(null);
      setJob(null);
      const body = new FormData();
      if (file) body.append('audio', file);
      body.append('language', language);
      body.append('diarize', String(diarize));
      if (diarize && numSpeakers) body.append('num_speakers', numSpeakers);
      if (diarize)
        for (const id of speakerVoiceIds.filter((id) => profiles.some((v) => v.voice_id === id))) body.append('speaker_voice_ids', id);
      setTranscript(await runOperation<Transcript>('/v1/audio/transcribe', body, asJob, setJob));
    });
  };

  const seek = (seconds: number) => {
    const element = audio.current;
    if (!element) return;
    element.currentTime = seconds;
    setCurrentSeconds(seconds);
    void element.play().catch(() => undefined);
  };

  const base = file?.name.replace(/\.[^.]*$/, '') || 'transcript';
  const exports: Array<[string, () => void]> = transcript
    ? [
        ['txt', () => saveText(`${base}.txt`, `${transcript.text}\n`, 'text/plain')],
        ['srt', () => saveText(`${base}.srt`, toSrt(transcript.segments), 'application/x-subrip')],
        ['vtt', () => saveText(`${base}.vtt`, toVtt(transcript.segments), 'text/vtt')],
        ['json', () => saveText(`${base}.json`, `${JSON.stringify(transcript, null, 2)}\n`, 'application/json')],
      ]
    : [];
  return (
    <section aria-labelledby="transcribe-heading">
      <h2 id="transcribe-heading">Transcribe</h2>
      <form class="panel" onSubmit={submit} noValidate>
        <AudioInput
          form={form}
          param="audio"
          label="Audio or video file"
          error={transcription.error}
          files={file ? [file] : []}
          onFiles={choose}
          record
        />
        <div class="row">
          <Field form={form} param="language" label="Language">
            <select
              id={fieldId(form, 'language')}
              value={language}
              onChange={(e) => setLanguage(e.currentTarget.value)}
              {...invalidIf(transcription.error, form, 'language')}
            >
              <option value="auto">Detect automatically</option>
              {capabilities?.transcribe.languages.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </Field>
          <div class="field checkbox">
            <input
              id={fieldId(form, 'diarize')}
              type="checkbox"
              checked={diarize}
              onChange={(e) => setDiarize(e.currentTarget.checked)}
              {...invalidIf(transcription.error, form, 'diarize')}
            />
            <label for={fieldId(form, 'diarize')}>Label speakers</label>
          </div>
          <Field form={form} param="num_speakers" label="Number of speakers" hint="Optional; leave empty to let voxd count.">
            <input
              id={fieldId(form, 'num_speakers')}
              type="number"
              min={1}
              max={32}
              inputMode="numeric"
              disabled={!diarize}
              value={numSpeakers}
              onInput={(e) => setNumSpeakers(e.currentTarget.value)}
              {...invalidIf(transcription.error, form, 'num_speakers')}
            />
          </Field>
        </div>
        {diarize && profiles.length > 0 && (
          <fieldset>
            <legend>Name speakers after voice profiles</legend>
            <div
              class="inline"
              id={fieldId(form, 'speaker_voice_ids')}
              tabIndex={-1}
              {...invalidIf(transcription.error, form, 'speaker_voice_ids')}
            >
              {profiles.map((voice) => (
                <div key={voice.voice_id} class="field checkbox">
                  <input
                    id={`transcribe-speaker-${voice.voice_id}`}
                    type="checkbox"
                    checked={speakerVoiceIds.includes(voice.voice_id)}
                    onChange={(e) =>
                      setSpeakerVoiceIds(
                        e.currentTarget.checked
                          ? [...speakerVoiceIds, voice.voice_id]
                          : speakerVoiceIds.filter((id) => id !== voice.voice_id),
                      )
                    }
                  />
                  <label for={`transcribe-speaker-${voice.voice_id}`}>{voice.name}</label>
                </div>
              ))}
            </div>
            <small class="hint">A speaker who sounds like one of these gets its name; the others stay numbered.</small>
          </fieldset>
        )}
        <JobChoice form={form} checked={asJob} onChange={setAsJob} />
        <button type="submit" disabled={transcription.busy}>
          {transcription.busy ? 'Transcribing…' : 'Transcribe'}
        </button>
        <JobProgress job={job} />
        <ErrorMessage form={form} error={transcription.error} />
      </form>

      {transcript && (
        <section class="panel result" aria-labelledby="transcript-heading">
          <h3 id="transcript-heading">Transcript</h3>
          {fileUrl && (
            <audio
              ref={audio}
              controls
              src={fileUrl}
              aria-label="Uploaded audio"
              onTimeUpdate={(e) => setCurrentSeconds(e.currentTarget.currentTime)}
            />
          )}
          <p class="facts">
            Language {transcript.language} · {clock(transcript.duration)} ·{' '}
            {transcript.speakers.length > 0 ? `${transcript.speakers.length} speaker(s)` : 'speakers not labelled'}. Paler words are less
            certain; click a word to play from it.
          </p>
          {transcript.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {transcript.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          <TranscriptView transcript={transcript} currentSeconds={currentSeconds} seek={seek} />
          {/* biome-ignore lint/a11y/useSemanticElements: a row of buttons, not form fields; a fieldset's border and legend would not fit */}
          <div class="inline" role="group" aria-label="Export">
            {exports.map(([format, save]) => (
              <button key={format} type="button" class="secondary" onClick={save}>
                Export {format}
              </button>
            ))}
          </div>
        </section>
      )}
      <LiveTranscription language={language} diarize={diarize} />
    </section>
  );
}
