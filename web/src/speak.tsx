/** Speak: text to speech with POST /v1/audio/tts, in a voice picked from GET /v1/voices. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, jsonBody, type Capabilities, type Voice } from './api';
import { Download, ErrorMessage, Field, fieldId, invalidIf } from './fields';
import { useAction, useObjectUrl, type VoiceList } from './hooks';

const form = 'speak';
/** Raw PCM has no header a browser can play: it is offered as a download only. */
const playable = (format: string): boolean => format !== 'pcm';
/** MP3 is played while it streams (Media Source Extensions take MPEG audio as it comes); other formats once complete. */
const streamable = (format: string): boolean =>
  format === 'mp3' && typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported('audio/mpeg');

/** Feeds a response body to a MediaSource the audio element plays from; resolves with the whole file once it has arrived. */
async function appendAll(media: MediaSource, body: ReadableStream<Uint8Array<ArrayBuffer>>): Promise<Blob> {
  if (media.readyState !== 'open') await new Promise((resolve) => media.addEventListener('sourceopen', resolve, { once: true }));
  const buffer = media.addSourceBuffer('audio/mpeg');
  const parts: Uint8Array<ArrayBuffer>[] = [];
  for await (const chunk of body) {
    parts.push(chunk);
    buffer.appendBuffer(chunk);
    await new Promise((resolve) => buffer.addEventListener('updateend', resolve, { once: true }));
  }
  media.endOfStream();
  return new Blob(parts, { type: 'audio/mpeg' });
}

interface Speech {
  format: string;
  engine: string | null;
  warnings: string[];
}

function voiceLabel(voice: Voice): string {
  return [voice.name, voice.languages.join(', '), voice.gender_estimate].filter(Boolean).join(' · ');
}

export function Speak({
  apiKey,
  capabilities,
  voices: { voices, busy: loadingVoices, error: voicesError },
}: {
  apiKey: string;
  capabilities: Capabilities | null;
  voices: VoiceList;
}) {
  const [languageFilter, setLanguageFilter] = useState('');
  const [genderFilter, setGenderFilter] = useState('');
  const [voiceId, setVoiceId] = useState('');
  const [text, setText] = useState('');
  const [language, setLanguage] = useState('');
  const [emotion, setEmotion] = useState('neutral');
  const [speed, setSpeed] = useState(1);
  const [format, setFormat] = useState('mp3');
  const synthesis = useAction();
  const [speech, setSpeech] = useState<Speech | null>(null);
  const [speechUrl, setSpeechBlob] = useObjectUrl();
  const [streamUrl, setStreamSource] = useObjectUrl();
  const sample = useAction();
  const [sampleUrl, setSampleBlob] = useObjectUrl();

  const voiceLanguages = useMemo(() => [...new Set(voices.flatMap((v) => v.languages))].sort(), [voices]);
  const shown = voices.filter(
    (v) => (!languageFilter || v.languages.includes(languageFilter)) && (!genderFilter || v.gender_estimate === genderFilter),
  );
  // The picked voice follows the filters: a voice they hide is not sent.
  useEffect(() => {
    if (!shown.some((v) => v.voice_id === voiceId)) setVoiceId(shown[0]?.voice_id ?? '');
  }, [voices, languageFilter, genderFilter]);

  const speak = (event: Event) => {
    event.preventDefault();
    void synthesis.run(async () => {
      setSpeechBlob(null);
      setSpeech(null);
      setStreamSource(null);
      const streamed = streamable(format);
      const body = {
        text,
        voice_id: voiceId,
        emotion,
        speed,
        format,
        ...(language ? { language } : {}),
        ...(streamed ? { stream: true } : {}),
      };
      const response = await api('/v1/audio/tts', { method: 'POST', ...jsonBody(body) });
      const warnings = response.headers.get('x-voxd-warnings');
      const answered = { format, engine: response.headers.get('x-voxd-engine'), warnings: warnings ? warnings.split(' | ') : [] };
      if (!streamed || !response.body) {
        setSpeechBlob(await response.blob());
        setSpeech(answered);
        return;
      }
      // The player shows at once and starts as soon as the first piece has arrived; the download once it is all here.
      const media = new MediaSource();
      setStreamSource(media);
      setSpeech(answered);
      setSpeechBlob(await appendAll(media, response.body));
    });
  };

  const playSample = () =>
    void sample.run(async () => {
      setSampleBlob(await (await api(`/v1/voices/${encodeURIComponent(voiceId)}/preview`)).blob());
    });

  const maxCharacters = capabilities?.tts.max_text_characters;
  const characters = [...text].length;
  return (
    <section aria-labelledby="speak-heading">
      <h2 id="speak-heading">Speak</h2>
      <form class="panel" onSubmit={speak} noValidate>
        <fieldset>
          <legend>Voice</legend>
          <div class="row">
            <div class="field">
              <label for="speak-filter-language">Voice language</label>
              <select id="speak-filter-language" value={languageFilter} onChange={(e) => setLanguageFilter(e.currentTarget.value)}>
                <option value="">Any</option>
                {voiceLanguages.map((l) => (
                  <option key={l} value={l}>
                    {l}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="speak-filter-gender">Gender</label>
              <select id="speak-filter-gender" value={genderFilter} onChange={(e) => setGenderFilter(e.currentTarget.value)}>
                <option value="">Any</option>
                <option value="female">Female</option>
                <option value="male">Male</option>
              </select>
            </div>
          </div>
          <Field
            form={form}
            param="voice_id"
            label="Voice"
            hint={
              loadingVoices
                ? 'Loading voices…'
                : apiKey
                  ? `${shown.length} of ${voices.length} voices`
                  : 'Save an API key to list the voices.'
            }
          >
            <div class="inline">
              <select
                id={fieldId(form, 'voice_id')}
                value={voiceId}
                onChange={(e) => setVoiceId(e.currentTarget.value)}
                {...invalidIf(synthesis.error, form, 'voice_id')}
              >
                {(['builtin', 'cloned'] as const).map((type) => {
                  const group = shown.filter((v) => v.type === type);
                  return (
                    group.length > 0 && (
                      <optgroup key={type} label={type === 'builtin' ? 'Built-in voices' : 'Cloned voices'}>
                        {group.map((v) => (
                          <option key={v.voice_id} value={v.voice_id}>
                            {voiceLabel(v)}
                          </option>
                        ))}
                      </optgroup>
                    )
                  );
                })}
              </select>
              <button type="button" class="secondary" onClick={playSample} disabled={!voiceId || sample.busy}>
                {sample.busy ? 'Loading sample…' : 'Play sample'}
              </button>
            </div>
          </Field>
          {sampleUrl && <audio class="sample" controls autoPlay src={sampleUrl} aria-label="Voice sample" />}
          <ErrorMessage form="speak-voices" error={voicesError ?? sample.error} />
        </fieldset>

        <Field form={form} param="text" label="Text" hint={maxCharacters ? `${characters} / ${maxCharacters} characters` : undefined}>
          <textarea
            id={fieldId(form, 'text')}
            rows={5}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            {...invalidIf(synthesis.error, form, 'text')}
          />
        </Field>

        <div class="row">
          <Field form={form} param="language" label="Language">
            <select
              id={fieldId(form, 'language')}
              value={language}
              onChange={(e) => setLanguage(e.currentTarget.value)}
              {...invalidIf(synthesis.error, form, 'language')}
            >
              <option value="">The voice's own</option>
              {capabilities?.tts.languages.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </Field>
          <Field form={form} param="emotion" label="Emotion">
            <select
              id={fieldId(form, 'emotion')}
              value={emotion}
              onChange={(e) => setEmotion(e.currentTarget.value)}
              {...invalidIf(synthesis.error, form, 'emotion')}
            >
              {(capabilities?.tts.emotions ?? ['neutral']).map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </select>
          </Field>
          <Field form={form} param="speed" label={`Speed: ${speed.toFixed(2)}×`}>
            <input
              id={fieldId(form, 'speed')}
              type="range"
              min={0.25}
              max={4}
              step={0.05}
              value={speed}
              onInput={(e) => setSpeed(Number(e.currentTarget.value))}
              {...invalidIf(synthesis.error, form, 'speed')}
            />
          </Field>
          <Field form={form} param="format" label="Format">
            <select
              id={fieldId(form, 'format')}
              value={format}
              onChange={(e) => setFormat(e.currentTarget.value)}
              {...invalidIf(synthesis.error, form, 'format')}
            >
              {(capabilities?.tts.formats ?? ['mp3']).map((f) => (
                <option key={f} value={f}>
                  {f}
                </option>
              ))}
            </select>
          </Field>
        </div>

        <button type="submit" disabled={synthesis.busy}>
          {synthesis.busy ? 'Speaking…' : 'Speak'}
        </button>
        <ErrorMessage form={form} error={synthesis.error} />
      </form>

      {speech && (speechUrl || streamUrl) && (
        <section class="panel result" aria-labelledby="speech-heading">
          <h3 id="speech-heading">Speech</h3>
          {playable(speech.format) ? (
            <audio controls autoPlay={streamUrl !== null} src={streamUrl ?? speechUrl ?? undefined} aria-label="Synthesized speech" />
          ) : (
            <p>Raw PCM cannot play in a browser: download it.</p>
          )}
          <dl class="facts">
            <dt>Engine</dt>
            <dd class="engine">{speech.engine ?? 'not reported'}</dd>
          </dl>
          {speech.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {speech.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          {speechUrl ? (
            <Download href={speechUrl} filename={`speech.${speech.format}`}>
              Download {speech.format}
            </Download>
          ) : (
            <p class="hint" role="status">
              Playing while the rest is made…
            </p>
          )}
        </section>
      )}
    </section>
  );
}
