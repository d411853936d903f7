/** Jobs: the key's jobs (GET /v1/jobs) with their status and progress; queued and running ones can be cancelled. */
import { useEffect, useState } from 'preact/hooks';
import { api, apiFile, apiJson, isFinal, type Job } from './api';
import { ErrorMessage } from './fields';
import { saveBlob, saveText, useAction } from './hooks';

/** How often the list is read again while a job on it is still active and the page is shown. */
const refreshMilliseconds = 2000;

const time = (iso: string): string => new Date(iso).toLocaleString();

/** A succeeded job's result as the API keeps it: a file (audio, zip), a text (srt, vtt, text) or the JSON answer. */
type JobResult = { object: 'file'; url: string } | { object: 'text'; content_type: string; text: string } | Record<string, unknown>;

async function saveResult(job: Job): Promise<void> {
  const result = job.result as JobResult;
  if (result.object === 'file' && typeof result.url === 'string') {
    const file = await apiFile(result.url);
    saveBlob(file.name, file);
  } else if (result.object === 'text' && typeof result.text === 'string')
    saveText(`${job.id}.txt`, result.text, String(result.content_type));
  else saveText(`${job.id}.json`, `${JSON.stringify(result, null, 2)}\n`, 'application/json');
}

export function Jobs({ apiKey, visible }: { apiKey: string; visible: boolean }) {
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const loading = useAction();
  const cancelling = useAction();
  const saving = useAction();

  const load = () => loading.run(async () => setJobs((await apiJson<{ data: Job[] }>('/v1/jobs?limit=50')).data));
  const active = jobs?.some((job) => !isFinal(job)) ?? false;
  useEffect(() => {
    if (visible && apiKey) void load();
  }, [visible, apiKey]);
  useEffect(() => {
    if (!visible || !active) return;
    const timer = setInterval(() => void load(), refreshMilliseconds);
    return () => clearInterval(timer);
  }, [visible, active]);

  const cancel = (job: Job) =>
    void cancelling.run(async () => {
      await api(job.links.cancel, { method: 'DELETE' });
      await load();
    });

  return (
    <section aria-labelledby="jobs-heading">
      <h2 id="jobs-heading">Jobs</h2>
      <div class="panel">
        <div class="inline">
          <button type="button" class="secondary" onClick={() => void load()} disabled={loading.busy || !apiKey}>
            Refresh
          </button>
          <small class="hint">
            {apiKey ? 'Operations run with "Run as a job" (or async=true in the API), newest first.' : 'Save an API key to list its jobs.'}
          </small>
        </div>
        <ErrorMessage form="jobs" error={loading.error ?? cancelling.error ?? saving.error} />
        {jobs?.length === 0 && <p class="hint">No jobs yet.</p>}
        <ul class="jobs" aria-label="Jobs">
          {jobs?.map((job) => (
            <li key={job.id} class={`job ${job.status}`}>
              <div class="inline">
                <strong>{job.operation}</strong>
                <span class="status">{job.status}</span>
                <small class="hint">
                  {[
                    job.input.filename,
                    typeof job.input.duration_seconds === 'number' ? `${job.input.duration_seconds.toFixed(1)} s` : null,
                    time(job.created_at),
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </small>
              </div>
              {!isFinal(job) && (
                <div class="inline">
                  <progress max={1} value={job.progress?.fraction} aria-label={`Progress of ${job.id}`} />
                  <span>
                    {job.progress
                      ? `${job.progress.stage}, ${Math.round(job.progress.fraction * 100)}%`
                      : job.status === 'running'
                        ? 'starting'
                        : 'waiting in the queue'}
                  </span>
                  <button type="button" class="secondary" onClick={() => cancel(job)} disabled={cancelling.busy || job.cancel_requested}>
                    Cancel <span class="visually-hidden">{job.id}</span>
                  </button>
                </div>
              )}
              {job.status === 'succeeded' && (
                <button type="button" class="secondary" onClick={() => void saving.run(() => saveResult(job))} disabled={saving.busy}>
                  Download result <span class="visually-hidden">of {job.id}</span>
                </button>
              )}
              {job.error?.message && <p class="error">{job.error.message}</p>}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
