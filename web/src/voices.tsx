/** Voices: the key's voices with samples; clone one from clips (with the speaker's consent), rename or label it, delete it. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiJson, jsonBody, type Voice } from './api';
import { AudioInput, ErrorMessage, Field, fieldId, invalidIf } from './fields';
import { useAction, useObjectUrl, type VoiceList } from './hooks';

const form = 'voices';
const editForm = 'voice-edit';

/** Labels as people type them, `accent=scottish, age=adult`, and back. */
const parseLabels = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(',')
      .map((pair) => pair.split('=').map((part) => part.trim()))
      .filter(([key]) => key)
      .map(([key, value]) => [key, value ?? '']),
  );
const formatLabels = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');

/** A modal dialog (focus stays in it, Escape closes it) shown while `open`. */
function Dialog({ open, label, onClose, children }: { open: boolean; label: string; onClose: () => void; children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (open) dialog.current?.showModal();
    else dialog.current?.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-label={label} onClose={onClose}>
      {open && children}
    </dialog>
  );
}

function VoiceFacts({ voice }: { voice: Voice }) {
  const facts = [
    voice.languages.join(', '),
    voice.gender_estimate,
    voice.type === 'cloned' ? `${voice.reference_seconds.toFixed(0)} s of reference audio` : null,
    formatLabels(voice.labels),
  ];
  return <small class="hint">{facts.filter(Boolean).join(' · ')}</small>;
}

export function Voices({ voices: { voices, busy, error, reload } }: { voices: VoiceList }) {
  const [name, setName] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [language, setLanguage] = useState('');
  const [description, setDescription] = useState('');
  const [labels, setLabels] = useState('');
  const [consent, setConsent] = useState(false);
  const creation = useAction();
  const sample = useAction();
  const [sampleUrl, setSampleBlob] = useObjectUrl();
  const [sampleName, setSampleName] = useState('');
  const [editing, setEditing] = useState<Voice | null>(null);
  const [draft, setDraft] = useState({ name: '', description: '', labels: '' });
  const edit = useAction();
  const [deleting, setDeleting] = useState<Voice | null>(null);
  const deletion = useAction();

  const create = (event: Event) => {
    event.preventDefault();
    void creation.run(async () => {
      const body = new FormData();
      body.append('name', name.trim());
      for (const file of files) body.append('files', file);
      if (language.trim()) body.append('language', language.trim());
      if (description.trim()) body.append('description', description.trim());
      if (labels.trim()) body.append('labels', JSON.stringify(parseLabels(labels)));
      body.append('consent', String(consent));
      await api('/v1/voices', { method: 'POST', body });
      setName('');
      setFiles([]);
      setDescription('');
      setLabels('');
      setConsent(false);
      await reload();
    });
  };

  const playSample = (voice: Voice) =>
    void sample.run(async () => {
      setSampleName(voice.name);
      setSampleBlob(await (await api(`/v1/voices/${encodeURIComponent(voice.voice_id)}/preview`)).blob());
    });

  const startEdit = (voice: Voice) => {
    setDraft({ name: voice.name, description: voice.description, labels: formatLabels(voice.labels) });
    setEditing(voice);
  };
  const saveEdit = (event: Event) => {
    event.preventDefault();
    void edit.run(async () => {
      const body = { name: draft.name.trim(), description: draft.description.trim(), labels: parseLabels(draft.labels) };
      await apiJson<Voice>(`/v1/voices/${encodeURIComponent(editing!.voice_id)}`, { method: 'PATCH', ...jsonBody(body) });
      setEditing(null);
      await reload();
    });
  };
  const confirmDelete = () =>
    void deletion.run(async () => {
      await api(`/v1/voices/${encodeURIComponent(deleting!.voice_id)}`, { method: 'DELETE' });
      setDeleting(null);
      await reload();
    });

  const cloned = voices.filter((v) => v.type === 'cloned');
  const builtin = voices.filter((v) => v.type === 'builtin');
  const playButton = (voice: Voice) => (
    <button type="button" class="secondary" onClick={() => playSample(voice)} disabled={sample.busy}>
      Play <span class="visually-hidden">{voice.name}</span> sample
    </button>
  );
  return (
    <section aria-labelledby="voices-heading">
      <h2 id="voices-heading">Voices</h2>
      <form class="panel" onSubmit={create} noValidate aria-labelledby="clone-heading">
        <h3 id="clone-heading">Clone a voice</h3>
        <div class="row">
          <Field form={form} param="name" label="Name">
            <input
              id={fieldId(form, 'name')}
              value={name}
              maxLength={200}
              onInput={(e) => setName(e.currentTarget.value)}
              {...invalidIf(creation.error, form, 'name')}
            />
          </Field>
          <Field form={form} param="language" label="Language" hint="Optional, e.g. en.">
            <input
              id={fieldId(form, 'language')}
              value={language}
              onInput={(e) => setLanguage(e.currentTarget.value)}
              {...invalidIf(creation.error, form, 'language')}
            />
          </Field>
        </div>
        <AudioInput
          form={form}
          param="files"
          label="Reference clips of one speaker (3 s to 10 min of speech in all)"
          error={creation.error}
          files={files}
          onFiles={setFiles}
          multiple
        />
        <Field form={form} param="description" label="Description" hint="Optional.">
          <input
            id={fieldId(form, 'description')}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
            {...invalidIf(creation.error, form, 'description')}
          />
        </Field>
        <Field form={form} param="labels" label="Labels" hint="Optional: key=value, separated by commas (accent=scottish, age=adult).">
          <input
            id={fieldId(form, 'labels')}
            value={labels}
            onInput={(e) => setLabels(e.currentTarget.value)}
            {...invalidIf(creation.error, form, 'labels')}
          />
        </Field>
        <div class="field checkbox">
          <input
            id={fieldId(form, 'consent')}
            type="checkbox"
            checked={consent}
            onChange={(e) => setConsent(e.currentTarget.checked)}
            {...invalidIf(creation.error, form, 'consent')}
          />
          <label for={fieldId(form, 'consent')}>The speaker agreed to have their voice cloned.</label>
        </div>
        <button type="submit" disabled={!consent || creation.busy}>
          {creation.busy ? 'Cloning…' : 'Clone voice'}
        </button>
        <ErrorMessage form={form} error={creation.error} />
      </form>

      {sampleUrl && <audio class="sample" controls autoPlay src={sampleUrl} aria-label={`Sample of ${sampleName}`} />}
      <ErrorMessage form="voices-list" error={error ?? sample.error} />

      <section class="panel" aria-labelledby="cloned-heading">
        <h3 id="cloned-heading">Cloned voices</h3>
        {cloned.length === 0 && <p class="hint">{busy ? 'Loading voices…' : 'None yet: clone one above.'}</p>}
        <ul class="voice-list" aria-label="Cloned voices">
          {cloned.map((voice) => (
            <li key={voice.voice_id} class="voice">
              <h4>{voice.name}</h4>
              {voice.description && <p>{voice.description}</p>}
              <VoiceFacts voice={voice} />
              <div class="inline">
                {playButton(voice)}
                <button type="button" class="secondary" onClick={() => startEdit(voice)}>
                  Edit <span class="visually-hidden">{voice.name}</span>
                </button>
                <button type="button" class="secondary" onClick={() => setDeleting(voice)}>
                  Delete <span class="visually-hidden">{voice.name}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      </section>

      <details class="panel">
        <summary>Built-in voices ({builtin.length})</summary>
        <ul class="voice-list" aria-label="Built-in voices">
          {builtin.map((voice) => (
            <li key={voice.voice_id} class="voice">
              <h4>{voice.name}</h4>
              <VoiceFacts voice={voice} />
              <div class="inline">{playButton(voice)}</div>
            </li>
          ))}
        </ul>
      </details>

      <Dialog open={editing !== null} label="Edit voice" onClose={() => setEditing(null)}>
        <form onSubmit={saveEdit} noValidate>
          <h3>Edit {editing?.name}</h3>
          <Field form={editForm} param="name" label="Name">
            <input
              id={fieldId(editForm, 'name')}
              value={draft.name}
              maxLength={200}
              onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
              {...invalidIf(edit.error, editForm, 'name')}
            />
          </Field>
          <Field form={editForm} param="description" label="Description">
            <input
              id={fieldId(editForm, 'description')}
              value={draft.description}
              onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })}
              {...invalidIf(edit.error, editForm, 'description')}
            />
          </Field>
          <Field form={editForm} param="labels" label="Labels" hint="key=value, separated by commas.">
            <input
              id={fieldId(editForm, 'labels')}
              value={draft.labels}
              onInput={(e) => setDraft({ ...draft, labels: e.currentTarget.value })}
              {...invalidIf(edit.error, editForm, 'labels')}
            />
          </Field>
          <div class="inline">
            <button type="submit" disabled={edit.busy}>
              Save
            </button>
            <button type="button" class="secondary" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
          <ErrorMessage form={editForm} error={edit.error} />
        </form>
      </Dialog>

      <Dialog open={deleting !== null} label="Delete voice" onClose={() => setDeleting(null)}>
        <h3>Delete {deleting?.name}?</h3>
        <p>Its reference clips, embeddings and every file made from them are deleted. This cannot be undone.</p>
        <div class="inline">
          <button type="button" class="danger" onClick={confirmDelete} disabled={deletion.busy}>
            Delete
          </button>
          <button type="button" class="secondary" onClick={() => setDeleting(null)}>
            Cancel
          </button>
        </div>
        <ErrorMessage form="voice-delete" error={deletion.error} />
      </Dialog>
    </section>
  );
}
