/** Form pieces the pages share: labelled fields the API's error `param` marks, and the error line. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, isFinal, type Job } from './api';
import { useRecorder } from './hooks';

/** A field's element id: `${form}-${param}`, param being the API's name for it, so an error's `param` finds it. */
export const fieldId = (form: string, param: string): string => `${form}-${param}`;
const errorId = (form: string): string => `${form}-error`;

/** Seconds as m:ss. */
export const clock = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/** Speaker colours of a transcript (styles.css): distinct on light and dark backgrounds; speakers past the eighth reuse them. */
export const speakerColours = 8;

/** Attributes marking a control invalid when the API's last error names its param. */
export function invalidIf(error: unknown, form: string, param: string): Record<string, string> {
  return error instanceof ApiError && error.param === param ? { 'aria-invalid': 'true', 'aria-errormessage': errorId(form) } : {};
}

export function Field({
  form,
  param,
  label,
  hint,
  children,
}: {
  form: string;
  param: string;
  label: string;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={fieldId(form, param)}>{label}</label>
      {children}
      {hint && <small class="hint">{hint}</small>}
    </div>
  );
}

/** The API's message; focus moves to the field it names so keyboard and screen-reader users land on what to fix. */
export function ErrorMessage({ form, error }: { form: string; error: unknown }) {
  useEffect(() => {
    if (error instanceof ApiError && error.param) document.getElementById(fieldId(form, error.param))?.focus();
  }, [error, form]);
  if (!error) return null;
  return (
    <p id={errorId(form)} class="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/** A download link for a blob URL, styled as a button. */
export function Download({ href, filename, children }: { href: string; filename: string; children: ComponentChildren }) {
  return (
    <a class="button secondary" href={href} download={filename}>
      {children}
    </a>
  );
}

const describeFile = (file: File): string => `${file.name} (${(file.size / 1e6).toFixed(1)} MB)`;

/** A file input that also takes files dropped on it and, with `record`, a recording from the microphone. */
export function AudioInput({
  form,
  param,
  label,
  error,
  files,
  onFiles,
  multiple = false,
  record = false,
}: {
  form: string;
  param: string;
  label: string;
  error: unknown;
  files: File[];
  onFiles: (files: File[]) => void;
  multiple?: boolean;
  record?: boolean;
}) {
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const recorder = useRecorder((file) => onFiles([file]));
  // Files cleared by the page (after a voice is made) or replaced by a drop or a recording: the input shows none.
  useEffect(() => {
    if (input.current && [...(input.current.files ?? [])].some((file) => !files.includes(file))) input.current.value = '';
  }, [files]);
  const choose = (list: FileList | null | undefined) => onFiles([...(list ?? [])].slice(0, multiple ? undefined : 1));
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: dropping a file is a shortcut; the labelled file input inside is the keyboard's way
    <div
      class={`dropzone${dragging ? ' dragging' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        choose(e.dataTransfer?.files);
      }}
    >
      <Field
        form={form}
        param={param}
        label={label}
        hint={
          files.length > 0
            ? files.map(describeFile).join(', ')
            : `Choose ${multiple ? 'files' : 'a file'} or drop ${multiple ? 'them' : 'it'} here${record ? ', or record' : ''}.`
        }
      >
        <div class="inline">
          <input
            ref={input}
            id={fieldId(form, param)}
            type="file"
            accept="audio/*,video/*"
            multiple={multiple}
            onChange={(e) => choose(e.currentTarget.files)}
            {...invalidIf(error, form, param)}
          />
          {record && (
            <button type="button" class="secondary" onClick={() => void (recorder.recording ? recorder.stop() : recorder.start())}>
              {recorder.recording ? 'Stop recording' : 'Record'}
            </button>
          )}
        </div>
      </Field>
      {recorder.recording && (
        <p class="recording" role="status">
          Recording from the microphone…
        </p>
      )}
      <ErrorMessage form={`${form}-microphone`} error={recorder.error} />
    </div>
  );
}

/** The "run as a job" choice of an operation form: long inputs then report progress and appear on the Jobs page. */
export function JobChoice({ form, checked, onChange }: { form: string; checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <div class="field checkbox">
      <input id={fieldId(form, 'async')} type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
      <label for={fieldId(form, 'async')}>Run as a job (for long files: shows progress, listed under Jobs)</label>
    </div>
  );
}

/** A running job's progress bar, fed by its events; nothing once the job is over. */
export function JobProgress({ job }: { job: Job | null }) {
  if (!job || isFinal(job)) return null;
  const fraction = job.progress?.fraction;
  const text = `Job ${job.status}${job.progress ? `: ${job.progress.stage}, ${Math.round(job.progress.fraction * 100)}%` : ''}`;
  return (
    <div class="job-progress" role="status">
      <progress max={1} value={fraction} aria-label="Job progress" />
      <span>{text}</span>
    </div>
  );
}
