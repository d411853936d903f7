/** Separate: POST /v1/audio/separate, then one waveform per stem with a mixer (gain, mute, solo) playing them in sync. */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import WaveSurfer from 'wavesurfer.js';
import { api, apiFile, runOperation, type Capabilities, type Job } from './api';
import { AudioInput, clock, Download, ErrorMessage, fieldId, invalidIf, JobChoice, JobProgress } from './fields';
import { saveBlob, useAction } from './hooks';

const form = 'separate';

interface StemInfo {
  name: string;
  url: string;
  rms_db: number | null;
  active_fraction: number;
}

interface Separation {
  duration: number;
  stems: StemInfo[];
  warnings: string[];
}

interface Stem {
  info: StemInfo;
  file: File;
  url: string;
}

interface Mix {
  gain: number;
  muted: boolean;
  solo: boolean;
}

const unmixed: Mix = { gain: 1, muted: false, solo: false };

function StemTrack({
  stem,
  colour,
  mix,
  audible,
  onMix,
  media,
  onSeek,
  onEnded,
  onTime,
}: {
  stem: Stem;
  colour: number;
  mix: Mix;
  audible: boolean;
  onMix: (mix: Mix) => void;
  media: (element: HTMLAudioElement | null) => void;
  onSeek: (seconds: number) => void;
  onEnded: () => void;
  /** Set on one stem: its playing position stands for all of them. */
  onTime?: (seconds: number) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const audio = useRef<HTMLAudioElement>(null);
  const [ready, setReady] = useState(false);
  const { name } = stem.info;

  useEffect(() => {
    const style = getComputedStyle(container.current!);
    const wave = WaveSurfer.create({
      container: container.current!,
      media: audio.current!,
      url: stem.url,
      height: 64,
      // Each stem at its own scale: a quiet ambience would otherwise be a flat line (its level is given in figures).
      normalize: true,
      waveColor: style.getPropertyValue(`--speaker-${colour}`),
      progressColor: style.getPropertyValue('--muted'),
      cursorColor: style.getPropertyValue('--fg'),
    });
    wave.on('ready', () => setReady(true));
    wave.on('interaction', onSeek);
    return () => wave.destroy();
  }, [stem.url]);
  // Applied with the render, not after the next paint: a click on Mute is heard at once.
  useLayoutEffect(() => {
    audio.current!.muted = !audible;
    audio.current!.volume = mix.gain;
  }, [audible, mix.gain]);

  const active = stem.info.active_fraction;
  return (
    <li class={`stem${audible ? '' : ' silent'}`} data-ready={ready}>
      <div class="stem-head">
        <h4>{name}</h4>
        <small class="hint">
          {stem.info.rms_db === null ? 'silent' : `${stem.info.rms_db.toFixed(1)} dBFS, sound in ${Math.round(active * 100)}% of it`}
        </small>
      </div>
      <div ref={container} class="waveform" role="img" aria-label={`${name} waveform: click to play from a point`} />
      <audio
        ref={(element) => {
          audio.current = element;
          media(element);
        }}
        aria-label={`${name} stem`}
        onEnded={onEnded}
        onTimeUpdate={onTime && ((e) => onTime(e.currentTarget.currentTime))}
      />
      <div class="inline mixer">
        <button type="button" class="secondary" aria-pressed={mix.muted} onClick={() => onMix({ ...mix, muted: !mix.muted })}>
          Mute <span class="visually-hidden">{name}</span>
        </button>
        <button type="button" class="secondary" aria-pressed={mix.solo} onClick={() => onMix({ ...mix, solo: !mix.solo })}>
          Solo <span class="visually-hidden">{name}</span>
        </button>
        <label for={`stem-gain-${name}`}>Gain</label>
        <input
          id={`stem-gain-${name}`}
          type="range"
          min={0}
          max={1}
          step={0.05}
          value={mix.gain}
          aria-label={`${name} gain`}
          onInput={(e) => onMix({ ...mix, gain: Number(e.currentTarget.value) })}
        />
        <span class="gain">{Math.round(mix.gain * 100)}%</span>
        <Download href={stem.url} filename={stem.file.name}>
          Download {name}
        </Download>
      </div>
    </li>
  );
}

export function Separate({ capabilities }: { capabilities: Capabilities | null }) {
  const [file, setFile] = useState<File | null>(null);
  const [chosenStems, setChosenStems] = useState<string[] | null>(null);
  const [format, setFormat] = useState('wav');
  const [asJob, setAsJob] = useState(false);
  const [job, setJob] = useState<Job | null>(null);
  const separation = useAction();
  const zip = useAction();
  const [result, setResult] = useState<Separation | null>(null);
  const [stems, setStems] = useState<Stem[]>([]);
  const [mixes, setMixes] = useState<Record<string, Mix>>({});
  const [playing, setPlaying] = useState(false);
  const [position, setPosition] = useState(0);
  const players = useRef(new Map<string, HTMLAudioElement>());

  const allStems = capabilities?.separate.stems ?? [];
  const picked = chosenStems ?? allStems;
  useEffect(
    () => () => {
      for (const stem of stems) URL.revokeObjectURL(stem.url);
    },
    [stems],
  );

  const fields = (): FormData => {
    const body = new FormData();
    if (file) body.append('audio', file);
    body.append('stems', picked.join(','));
    body.append('format', format);
    return body;
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void separation.run(async () => {
      setResult(null);
      setStems([]);
      setJob(null);
      setPlaying(false);
      setPosition(0);
      const separated = await runOperation<Separation>('/v1/audio/separate', fields(), asJob, setJob);
      const files = await Promise.all(separated.stems.map((info) => apiFile(info.url)));
      setMixes(Object.fromEntries(separated.stems.map((info) => [info.name, unmixed])));
      setStems(separated.stems.map((info, i) => ({ info, file: files[i]!, url: URL.createObjectURL(files[i]!) })));
      setResult(separated);
    });
  };

  const downloadZip = () =>
    void zip.run(async () => {
      const body = fields();
      body.append('response_format', 'zip');
      saveBlob('stems.zip', await (await api('/v1/audio/separate', { method: 'POST', body })).blob());
    });

  // Read when called: a waveform's click handler outlives the render that made it.
  const media = () => [...players.current.values()];
  const seekAll = (seconds: number) => {
    for (const element of media()) element.currentTime = seconds;
    setPosition(seconds);
  };
  const playAll = async () => {
    seekAll(media()[0]?.currentTime ?? 0);
    setPlaying(true);
    await Promise.all(media().map((element) => element.play()));
  };
  const pauseAll = () => {
    for (const element of media()) element.pause();
    setPlaying(false);
  };
  const soloed = Object.values(mixes).some((mix) => mix.solo);

  return (
    <section aria-labelledby="separate-heading">
      <h2 id="separate-heading">Separate</h2>
      <form class="panel" onSubmit={submit} noValidate>
        <AudioInput
          form={form}
          param="audio"
          label="Soundtrack"
          error={separation.error}
          files={file ? [file] : []}
          onFiles={([chosen]) => setFile(chosen ?? null)}
        />
        <fieldset>
          <legend>Stems</legend>
          <div class="inline" id={fieldId(form, 'stems')} tabIndex={-1} {...invalidIf(separation.error, form, 'stems')}>
            {allStems.map((name) => (
              <div key={name} class="field checkbox">
                <input
                  id={`separate-stem-${name}`}
                  type="checkbox"
                  checked={picked.includes(name)}
                  onChange={(e) =>
                    setChosenStems(
                      e.currentTarget.checked ? allStems.filter((s) => s === name || picked.includes(s)) : picked.filter((s) => s !== name),
                    )
                  }
                />
                <label for={`separate-stem-${name}`}>{name}</label>
              </div>
            ))}
          </div>
          <small class="hint">Fewer stems come with a residual: everything else, so the files still add up to the input.</small>
        </fieldset>
        <div class="row">
          <div class="field">
            <label for={fieldId(form, 'format')}>Format</label>
            <select
              id={fieldId(form, 'format')}
              value={format}
              onChange={(e) => setFormat(e.currentTarget.value)}
              {...invalidIf(separation.error, form, 'format')}
            >
              {(capabilities?.separate.formats ?? ['wav']).map((f) => (
                <option key={f} value={f}>
                  {f}
                </option>
              ))}
            </select>
          </div>
          <JobChoice form={form} checked={asJob} onChange={setAsJob} />
        </div>
        <button type="submit" disabled={separation.busy}>
          {separation.busy ? 'Separating…' : 'Separate'}
        </button>
        <JobProgress job={job} />
        <ErrorMessage form={form} error={separation.error} />
      </form>

      {result && (
        <section class="panel result" aria-labelledby="stems-heading">
          <h3 id="stems-heading">Stems</h3>
          <div class="inline">
            <button type="button" onClick={() => void (playing ? pauseAll() : playAll())}>
              {playing ? 'Pause all' : 'Play all'}
            </button>
            {/* The keyboard's way to seek (a click on any waveform does the same). */}
            <label for="separate-position">Position</label>
            <input
              id="separate-position"
              class="position"
              type="range"
              min={0}
              max={result.duration}
              step={0.1}
              value={position}
              onInput={(e) => seekAll(Number(e.currentTarget.value))}
            />
            <span class="gain">
              {clock(position)} / {clock(result.duration)}
            </span>
          </div>
          <div class="inline">
            <button type="button" class="secondary" onClick={downloadZip} disabled={zip.busy}>
              {zip.busy ? 'Preparing zip…' : 'Download all (zip)'}
            </button>
            <small class="hint">The zip is made by separating again on the server.</small>
          </div>
          <ErrorMessage form="separate-zip" error={zip.error} />
          {result.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {result.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          <ul class="stems" aria-label="Stems">
            {stems.map((stem, i) => {
              const mix = mixes[stem.info.name] ?? unmixed;
              return (
                <StemTrack
                  key={stem.url}
                  stem={stem}
                  colour={i}
                  mix={mix}
                  audible={!mix.muted && (!soloed || mix.solo)}
                  onMix={(changed) => setMixes((all) => ({ ...all, [stem.info.name]: changed }))}
                  media={(element) => (element ? players.current.set(stem.info.name, element) : players.current.delete(stem.info.name))}
                  onSeek={seekAll}
                  onEnded={() => setPlaying(false)}
                  {...(i === 0 ? { onTime: setPosition } : {})}
                />
              );
            })}
          </ul>
        </section>
      )}
    </section>
  );
}
