/** Convert: POST /v1/audio/vc re-voices a recording as a target voice; the source and the result side by side, with the API's figures. */
import { useRef, useState } from 'preact/hooks';
import { apiFile, runOperation, type Job, type Voice } from './api';
import { AudioInput, Download, ErrorMessage, Field, fieldId, invalidIf, JobChoice, JobProgress } from './fields';
import { switchSides, useAction, useObjectUrl } from './hooks';

const form = 'convert';

interface Conversion {
  url: string;
  duration: number;
  similarity_to_target: number | null;
  similarity_to_source: number;
  source_similarity_to_target: number | null;
  f0_correlation: number;
  warnings: string[];
}

const figure = (value: number | null): string => (value === null ? 'n/a' : value.toFixed(2));

export function Convert({ voices }: { voices: Voice[] }) {
  const [file, setFile] = useState<File | null>(null);
  const [sourceUrl, setSourceBlob] = useObjectUrl();
  const [voiceId, setVoiceId] = useState('');
  const [preserveEmotion, setPreserveEmotion] = useState(true);
  const [asJob, setAsJob] = useState(false);
  const [job, setJob] = useState<Job | null>(null);
  const conversion = useAction();
  const [result, setResult] = useState<{ conversion: Conversion; file: File; voice: string } | null>(null);
  const [convertedUrl, setConvertedBlob] = useObjectUrl();
  const source = useRef<HTMLAudioElement>(null);
  const converted = useRef<HTMLAudioElement>(null);

  // The first voice until one is picked; a cloned voice first, as converting to one's own voice is the usual aim.
  const ordered = [...voices.filter((v) => v.type === 'cloned'), ...voices.filter((v) => v.type === 'builtin')];
  const target = voiceId || ordered[0]?.voice_id || '';

  const choose = ([chosen]: File[]) => {
    setFile(chosen ?? null);
    setSourceBlob(chosen ?? null);
    setResult(null);
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void conversion.run(async () => {
      setResult(null);
      setJob(null);
      const body = new FormData();
      if (file) body.append('audio', file);
      body.append('target_voice_id', target);
      body.append('preserve_emotion', String(preserveEmotion));
      body.append('response_format', 'json');
      const answer = await runOperation<Conversion>('/v1/audio/vc', body, asJob, setJob);
      const output = await apiFile(answer.url);
      setConvertedBlob(output);
      setResult({ conversion: answer, file: output, voice: voices.find((v) => v.voice_id === target)?.name ?? target });
    });
  };

  const c = result?.conversion;
  return (
    <section aria-labelledby="convert-heading">
      <h2 id="convert-heading">Convert</h2>
      <form class="panel" onSubmit={submit} noValidate>
        <AudioInput
          form={form}
          param="audio"
          label="Recording to re-voice"
          error={conversion.error}
          files={file ? [file] : []}
          onFiles={choose}
          record
        />
        <div class="row">
          <Field
            form={form}
            param="target_voice_id"
            label="Target voice"
            hint={voices.length === 0 ? 'Save an API key to list the voices.' : 'Clone voices on the Voices page.'}
          >
            <select
              id={fieldId(form, 'target_voice_id')}
              value={target}
              onChange={(e) => setVoiceId(e.currentTarget.value)}
              {...invalidIf(conversion.error, form, 'target_voice_id')}
            >
              {(['cloned', 'builtin'] as const).map((type) => {
                const group = ordered.filter((v) => v.type === type);
                return (
                  group.length > 0 && (
                    <optgroup key={type} label={type === 'builtin' ? 'Built-in voices' : 'Cloned voices'}>
                      {group.map((v) => (
                        <option key={v.voice_id} value={v.voice_id}>
                          {v.name}
                        </option>
                      ))}
                    </optgroup>
                  )
                );
              })}
            </select>
          </Field>
          <div class="field checkbox">
            <input
              id={fieldId(form, 'preserve_emotion')}
              type="checkbox"
              checked={preserveEmotion}
              onChange={(e) => setPreserveEmotion(e.currentTarget.checked)}
              {...invalidIf(conversion.error, form, 'preserve_emotion')}
            />
            <label for={fieldId(form, 'preserve_emotion')}>Keep the source's intonation</label>
          </div>
          <JobChoice form={form} checked={asJob} onChange={setAsJob} />
        </div>
        <button type="submit" disabled={conversion.busy || !target}>
          {conversion.busy ? 'Converting…' : 'Convert'}
        </button>
        <JobProgress job={job} />
        <ErrorMessage form={form} error={conversion.error} />
      </form>

      {result && c && convertedUrl && (
        <section class="panel result" aria-labelledby="converted-heading">
          <h3 id="converted-heading">Converted to {result.voice}</h3>
          <div class="ab">
            <div>
              <h4>A: source</h4>
              {sourceUrl && <audio ref={source} controls src={sourceUrl} aria-label="Source audio" />}
            </div>
            <div>
              <h4>B: converted</h4>
              <audio ref={converted} controls src={convertedUrl} aria-label="Converted audio" />
            </div>
          </div>
          <div class="inline">
            <button type="button" class="secondary" onClick={() => switchSides(source.current, converted.current)}>
              Switch A/B
            </button>
            <Download href={convertedUrl} filename={result.file.name}>
              Download converted
            </Download>
          </div>
          <dl class="figures">
            <dt>Similarity to the target voice</dt>
            <dd class="similarity-target">
              {figure(c.similarity_to_target)} <small class="hint">(source: {figure(c.source_similarity_to_target)})</small>
            </dd>
            <dt>Similarity to the source speaker</dt>
            <dd>{figure(c.similarity_to_source)}</dd>
            <dt>Intonation kept (F0 correlation)</dt>
            <dd class="f0">{figure(c.f0_correlation)}</dd>
          </dl>
          <p class="hint">
            Similarities are speaker-embedding cosines (1 is the same voice); a conversion that worked is closer to the target than the
            source was.
          </p>
          {c.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {c.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
        </section>
      )}
    </section>
  );
}
