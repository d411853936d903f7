/** The studio's shell: the key, the page navigation (in the URL's hash) and the capabilities the pages fill pickers from. */
import { useEffect, useState } from 'preact/hooks';
import { apiJson, storedKey, storeKey, type Capabilities } from './api';
import { ErrorMessage } from './fields';
import { Convert } from './convert';
import { Dub } from './dub';
import { useAction, useVoices } from './hooks';
import { Jobs } from './jobs';
import { Separate } from './separate';
import { Speak } from './speak';
import { Transcribe } from './transcribe';
import { Voices } from './voices';

const pages = {
  speak: 'Speak',
  transcribe: 'Transcribe',
  separate: 'Separate',
  convert: 'Convert',
  dub: 'Dub',
  voices: 'Voices',
  jobs: 'Jobs',
} as const;
type Page = keyof typeof pages;
const pageFromHash = (): Page => {
  const name = location.hash.slice(2);
  return name in pages ? (name as Page) : 'speak';
};

function KeyForm({ apiKey, onChange }: { apiKey: string; onChange: (key: string) => void }) {
  const [draft, setDraft] = useState(apiKey);
  const save = (event: Event) => {
    event.preventDefault();
    onChange(draft.trim());
  };
  return (
    <form class="key" onSubmit={save} aria-label="Authentication">
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autoComplete="off"
        spellcheck={false}
        placeholder="vx_…"
        value={draft}
        onInput={(e) => setDraft(e.currentTarget.value)}
      />
      <button type="submit">Use key</button>
      {apiKey && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setDraft('');
            onChange('');
          }}
        >
          Forget
        </button>
      )}
      <small class="hint">{apiKey ? 'Kept in this tab only.' : 'Paste a key (voxd keys create, or data/initial-api-key).'}</small>
    </form>
  );
}

export function App() {
  const [apiKey, setApiKey] = useState(storedKey);
  const [page, setPage] = useState(pageFromHash);
  const [capabilities, setCapabilities] = useState<Capabilities | null>(null);
  const loading = useAction();
  const voices = useVoices(apiKey);

  useEffect(() => {
    const onHashChange = () => setPage(pageFromHash());
    addEventListener('hashchange', onHashChange);
    return () => removeEventListener('hashchange', onHashChange);
  }, []);
  useEffect(() => {
    void loading.run(async () => setCapabilities(await apiJson<Capabilities>('/v1/capabilities')));
  }, []);
  useEffect(() => {
    document.title = `${pages[page]} · voxd studio`;
  }, [page]);

  const changeKey = (key: string) => {
    storeKey(key);
    setApiKey(key);
  };
  return (
    <>
      <header>
        <div class="brand">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <h1>voxd studio</h1>
        </div>
        <nav aria-label="Pages">
          {(Object.keys(pages) as Page[]).map((p) => (
            <a key={p} href={`#/${p}`} aria-current={p === page ? 'page' : undefined}>
              {pages[p]}
            </a>
          ))}
          <a href="/docs">API docs</a>
        </nav>
        <KeyForm apiKey={apiKey} onChange={changeKey} />
      </header>
      <main>
        <ErrorMessage form="capabilities" error={loading.error} />
        {/* All stay mounted, so a result survives a visit to another page. */}
        <div hidden={page !== 'speak'}>
          <Speak apiKey={apiKey} capabilities={capabilities} voices={voices} />
        </div>
        <div hidden={page !== 'transcribe'}>
          <Transcribe capabilities={capabilities} voices={voices.voices} />
        </div>
        <div hidden={page !== 'separate'}>
          <Separate capabilities={capabilities} />
        </div>
        <div hidden={page !== 'convert'}>
          <Convert voices={voices.voices} />
        </div>
        <div hidden={page !== 'dub'}>
          <Dub capabilities={capabilities} />
        </div>
        <div hidden={page !== 'voices'}>
          <Voices voices={voices} />
        </div>
        <div hidden={page !== 'jobs'}>
          <Jobs apiKey={apiKey} visible={page === 'jobs'} />
        </div>
      </main>
    </>
  );
}
