/**
 * The README's benchmark figures against bench/results. A figure links to the value it comes from, a JSON pointer
 * (RFC 6901, in URI fragment form) into a results file: `[1369 MB](bench/results/separation.json#/memory/0/peak_rss_mb)`,
 * titled "x100" where a fraction is written as a percentage. The number written must be the value rounded to as many
 * decimals as it shows, so a bench re-run that moves a figure fails here until the README follows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

const root = path.join(import.meta.dirname, '..');
// The figures tagged when the links were introduced: a link lost in an edit would otherwise go unnoticed.
const taggedFigures = 77;

interface Marker {
  line: number;
  text: string;
  file: string;
  pointer: string;
  title: string | undefined;
}

function markers(readme: string): Marker[] {
  return readme.split('\n').flatMap((content, index) =>
    [...content.matchAll(/\[([^\]]*)\]\((bench\/results\/[^)#\s]+)#([^)\s]*)(?: "([^"]*)")?\)/g)].map((match) => ({
      line: index + 1,
      text: match[1]!,
      file: match[2]!,
      pointer: match[3]!,
      title: match[4],
    })),
  );
}

/** The value at a pointer in URI fragment form (percent-decoded first, then ~1 and ~0 per token); undefined if absent. */
function resolve(document: unknown, pointer: string): unknown {
  if (!pointer.startsWith('/')) return undefined;
  let node = document;
  for (const token of decodeURIComponent(pointer).slice(1).split('/')) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Why the marker's figure does not match its source, or undefined when it does. */
function mismatch(marker: Marker, documents: Map<string, unknown>): string | undefined {
  const numbers = marker.text.match(/-?\d+(?:\.\d+)?/g) ?? [];
  if (numbers.length !== 1) return `the link text should hold one number, not ${numbers.length}`;
  if (marker.title !== undefined && marker.title !== 'x100') return `unknown title "${marker.title}" (only "x100")`;
  if (!documents.has(marker.file)) {
    try {
      documents.set(marker.file, JSON.parse(readFileSync(path.join(root, marker.file), 'utf8')));
    } catch (error) {
      return `${marker.file} cannot be read: ${(error as Error).message}`;
    }
  }
  const value = resolve(documents.get(marker.file), marker.pointer);
  if (typeof value !== 'number')
    return `${marker.file}#${marker.pointer} is ${value === undefined ? 'missing' : `not a number: ${JSON.stringify(value)}`}`;
  const scaled = marker.title === 'x100' ? value * 100 : value;
  const written = numbers[0]!;
  const decimals = written.split('.')[1]?.length ?? 0;
  // Rounded to the decimals written; the slack absorbs binary fractions such as 0.0965 * 100.
  if (Math.abs(scaled - Number(written)) <= 0.5 * 10 ** -decimals + 1e-9) return undefined;
  return `${marker.file}#${marker.pointer} is ${value}${marker.title === 'x100' ? ` (x100: ${scaled.toFixed(decimals + 2)})` : ''}, which rounds to ${scaled.toFixed(decimals)}`;
}

describe('README figures', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const found = markers(readme);

  test('each figure linked to bench/results is the value there, rounded as written', { timeout: 10_000 }, () => {
    const documents = new Map<string, unknown>();
    const failures = found.flatMap((marker) => {
      const reason = mismatch(marker, documents);
      return reason === undefined ? [] : [`README.md:${marker.line}: "${marker.text}": ${reason}`];
    });
    assert.deepEqual(failures, []);
  });

  test(`at least ${taggedFigures} figures are linked`, { timeout: 10_000 }, () => {
    assert.ok(found.length >= taggedFigures, `${found.length} figures link to bench/results, ${taggedFigures} were tagged`);
  });
});
