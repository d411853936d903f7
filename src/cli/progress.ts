/** A progress bar on stderr when it is a terminal (nothing otherwise, so pipes and logs stay clean). */
import { SingleBar } from 'cli-progress';
import type { Progress } from '../core/operation-context.js';

export interface ProgressBar {
  update(progress: Progress): void;
  stop(): void;
}

export function progressBar(stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({
    stream,
    format: ' {bar} {percentage}% | {stage} | {duration_formatted}',
    hideCursor: true,
    clearOnComplete: true,
    barsize: 30,
  });
  let started = false;
  return {
    update: ({ stage, fraction }) => {
      if (!started) {
        bar.start(1000, 0, { stage });
        started = true;
      }
      bar.update(Math.round(fraction * 1000), { stage });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

export interface StepProgress {
  /** `done` steps of `total` (when it becomes known, or changes) are finished; `message` says what happens now. */
  update(done: number, message: string, total?: number): void;
  /** Ends the bar and prints a closing line. */
  stop(message: string): void;
}

/**
 * Progress through countable steps (models pulled, voices analysed): a bar on a terminal, a line per message otherwise
 * (setup's output in CI logs).
 */
export function stepProgress(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): StepProgress {
  if (!stream.isTTY) {
    return {
      update: (_done, message) => void stream.write(`${message}\n`),
      stop: (message) => void stream.write(`${message}\n`),
    };
  }
  const bar = new SingleBar({
    stream,
    format: ` ${label} {bar} {value}/{total} | {message}`,
    hideCursor: true,
    barsize: 30,
    etaBuffer: 10,
  });
  let started = false;
  return {
    update: (done, message, newTotal) => {
      if (!started) {
        bar.start(newTotal ?? total, done, { message });
        started = true;
      } else if (newTotal !== undefined) bar.setTotal(newTotal);
      bar.update(done, { message: message.length > 60 ? `${message.slice(0, 57)}...` : message });
    },
    stop: (message) => {
      if (started) bar.stop();
      started = false;
      stream.write(`${message}\n`);
    },
  };
}
