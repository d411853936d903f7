/** The CLI's progress bar: drawn on a terminal, silent on a pipe. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { progressBar } from '../../src/cli/progress.js';

function stream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      text += chunk.toString();
      done();
    },
  });
  Object.assign(sink, { isTTY, columns: 100, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
  return { stream: sink as unknown as NodeJS.WriteStream, text: () => text };
}

test('on a terminal the bar shows the stage and percentage; on a pipe nothing is written', () => {
  const tty = stream(true);
  const bar = progressBar(tty.stream);
  bar.update({ stage: 'transcribing', fraction: 0.42 });
  bar.stop();
  assert.match(tty.text(), /42% \| transcribing/);
  const pipe = stream(false);
  const quiet = progressBar(pipe.stream);
  quiet.update({ stage: 'transcribing', fraction: 0.42 });
  quiet.stop();
  assert.equal(pipe.text(), '');
});
