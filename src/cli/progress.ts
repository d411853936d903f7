/** A progress bar on stderr when it is a terminal (nothing otherwise, so pipes and logs stay clean). */
import { SingleBar } from 'cli-progress';
import type { Progress } from '../operations/context.js';

export interface ProgressBar {
  update(progress: Progress): void;
  stop(): void;
}

export function progressBar(stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({ stream, format: ' {bar} {percentage}% | {stage} | {duration_formatted}', hideCursor: true, clearOnComplete: true, barsize: 30 });
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
