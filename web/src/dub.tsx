/**
 * Dub: POST /v1/dubbing re-voices a recording (audio or video) into English or in its own language, as a job with progress by
 * stage; then the original and the dub side by side (A/B), who spoke for whom, the lines, and the downloads.
 */
import { useRef, useState } from 'preact/hooks';
import { apiFile, runOperation, type Capabilities, type Job } from './api';
import { AudioInput, clock, Download, ErrorMessage, Field, fieldId, invalidIf, JobProgress } from './fields';
import { switchSides, useAction, useObjectUrl } from './hooks';

const form = 'dub';

interface ResultFile {
  url: string;
  content_type: string;
}

interface Dubbing {
  source_language: string;
  target_language: string;
  duration: number;
  files: {
    audio: ResultFile;
    dialogue: ResultFile;
    video: ResultFile | null;
    transcript_json: ResultFile;
    transcript_srt: ResultFile;
    transcript_vtt: ResultFile;
  };
  voices: Array<{ speaker: string; voice_id: string; cloned: boolean; temporary: boolean }>;
  lines: Array<{ speaker: string; text: string; sourceStartSeconds: number; dubbedStartSeconds: number; tempo: number }>;
  warnings: string[];
}

/** A result file fetched with the key, as a blob URL for players and downloads. */
interface Fetched {
  file: File;
  url: string;
}

const downloads = [
  ['audio', 'Download dubbed audio'],
  ['video', 'Download dubbed video'],
  ['dialogue', 'Download dubbed voices alone'],
  ['transcript_srt', 'Download subtitles (SRT)'],
  ['transcript_vtt', 'Download subtitles (VTT)'],
  ['transcript_json', 'Download transcript (JSON)'],
] as const;

export function Dub({ capabilities }: { capabilities: Capabilities | null }) {
  const [file, setFile] = useState<File | null>(null);
  const [sourceUrl, setSourceBlob] = useObjectUrl();
  const [target, setTarget] = useState('en');
  const [sourceLanguage, setSourceLanguage] = useState('auto');
  const [consent, setConsent] = useState(false);
  const [keepBackground, setKeepBackground] = useState(true);
  const [job, setJob] = useState<Job | null>(null);
  const dubbing = useAction();
  const [result, setResult] = useState<{ dub: Dubbing; files: Partial<Record<(typeof downloads)[number][0], Fetched>> } | null>(null);
  const original = useRef<HTMLAudioElement>(null);
  const dubbed = useRef<HTMLAudioElement>(null);

  const choose = ([chosen]: File[]) => {
    setFile(chosen ?? null);
    setSourceBlob(chosen ?? null);
    setResult(null);
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void dubbing.run(async () => {
      for (const fetched of Object.values(result?.files ?? {})) URL.revokeObjectURL(fetched.url);
      setResult(null);
      setJob(null);
      const body = new FormData();
      if (file) body.append('audio', file);
      body.append('target_language', target);
      body.append('source_language', sourceLanguage);
      body.append('voices', 'clone');
      body.append('consent', String(consent));
      body.append('keep_background', String(keepBackground));
      body.append('format', 'wav');
      const dub = await runOperation<Dubbing>('/v1/dubbing', body, true, setJob);
      const files: Partial<Record<(typeof downloads)[number][0], Fetched>> = {};
      for (const [name] of downloads) {
        const entry = dub.files[name];
        if (!entry) continue;
        const fetched = await apiFile(entry.url);
        files[name] = { file: fetched, url: URL.createObjectURL(fetched) };
      }
      setResult({ dub, files });
    });
  };

  const languages = capabilities?.transcribe.languages ?? [];
  const dub = result?.dub;
  return (
    <section aria-labelledby="dub-heading">
      <h2 id="dub-heading">Dub</h2>
      <form class="panel" onSubmit={submit} noValidate>
        <AudioInput
          form={form}
          param="audio"
          label="Recording or video to dub"
          error={dubbing.error}
          files={file ? [file] : []}
          onFiles={choose}
        />
        <div class="row">
          <Field
            form={form}
            param="target_language"
            label="Dub into"
            hint="English, or the spoken language itself to re-voice it (Whisper translates into English only)."
          >
            <select
              id={fieldId(form, 'target_language')}
              value={target}
              onChange={(e) => setTarget(e.currentTarget.value)}
              {...invalidIf(dubbing.error, form, 'target_language')}
            >
              <option value="en">en (English)</option>
              {languages
                .filter((language) => language !== 'en')
                .map((language) => (
                  <option key={language} value={language}>
                    {language} (re-voiced)
                  </option>
                ))}
            </select>
          </Field>
          <Field form={form} param="source_language" label="Spoken language">
            <select
              id={fieldId(form, 'source_language')}
              value={sourceLanguage}
              onChange={(e) => setSourceLanguage(e.currentTarget.value)}
              {...invalidIf(dubbing.error, form, 'source_language')}
            >
              <option value="auto">Detect</option>
              {languages.map((language) => (
                <option key={language} value={language}>
                  {language}
                </option>
              ))}
            </select>
          </Field>
          <div class="field checkbox">
            <input
              id={fieldId(form, 'keep_background')}
              type="checkbox"
              checked={keepBackground}
              onChange={(e) => setKeepBackground(e.currentTarget.checked)}
            />
            <label for={fieldId(form, 'keep_background')}>Keep the music, effects and ambience</label>
          </div>
        </div>
        <div class="field checkbox">
          <input
            id={fieldId(form, 'consent')}
            type="checkbox"
            checked={consent}
            onChange={(e) => setConsent(e.currentTarget.checked)}
            {...invalidIf(dubbing.error, form, 'consent')}
          />
          <label for={fieldId(form, 'consent')}>
            The speakers agreed to having their voices cloned (each speaker speaks the dub in a voice cloned from their own speech)
          </label>
        </div>
        <button type="submit" disabled={dubbing.busy}>
          {dubbing.busy ? 'Dubbing…' : 'Dub'}
        </button>
        <JobProgress job={job} />
        <ErrorMessage form={form} error={dubbing.error} />
      </form>

      {dub && result && (
        <section class="panel result" aria-labelledby="dubbed-heading">
          <h3 id="dubbed-heading">
            Dubbed from {dub.source_language} into {dub.target_language} ({clock(dub.duration)})
          </h3>
          <div class="ab">
            <div>
              <h4>A: original</h4>
              {sourceUrl && <audio ref={original} controls src={sourceUrl} aria-label="Original audio" />}
            </div>
            <div>
              <h4>B: dubbed</h4>
              {result.files.audio && <audio ref={dubbed} controls src={result.files.audio.url} aria-label="Dubbed audio" />}
            </div>
          </div>
          {result.files.video && <video controls src={result.files.video.url} aria-label="Dubbed video" class="dubbed-video" />}
          <div class="inline">
            <button type="button" class="secondary" onClick={() => switchSides(original.current, dubbed.current)}>
              Switch A/B
            </button>
            {downloads.map(([name, label]) => {
              const fetched = result.files[name];
              return (
                fetched && (
                  <Download key={name} href={fetched.url} filename={fetched.file.name}>
                    {label}
                  </Download>
                )
              );
            })}
          </div>
          <table aria-label="Voices">
            <thead>
              <tr>
                <th scope="col">Speaker</th>
                <th scope="col">Voice</th>
              </tr>
            </thead>
            <tbody>
              {dub.voices.map((v) => (
                <tr key={v.speaker}>
                  <td>{v.speaker}</td>
                  <td>
                    {v.voice_id}
                    {v.cloned && <small class="hint">{v.temporary ? ' cloned for this dub, deleted after' : ' cloned, saved'}</small>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ol class="dub-lines" aria-label="Dubbed lines">
            {dub.lines.map((line) => (
              <li key={`${line.speaker}-${line.sourceStartSeconds}`}>
                <span class="time">{clock(line.dubbedStartSeconds)}</span> <strong>{line.speaker}</strong> {line.text}
                {line.tempo > 1.001 && <small class="hint"> ({line.tempo.toFixed(2)}× faster)</small>}
              </li>
            ))}
          </ol>
          {dub.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {dub.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
        </section>
      )}
    </section>
  );
}
