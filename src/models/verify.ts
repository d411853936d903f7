/**
 * The one way model files are checked: against the size and digests their publisher gives (sha256, sha1 or md5; every one
 * given must match), read once whatever the number of digests.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FileDigests } from './catalog/index.js';

export const digestAlgorithms = ['sha256', 'sha1', 'md5'] as const;
export type DigestAlgorithm = (typeof digestAlgorithms)[number];

/** The file's digests by each algorithm, in one read. */
export async function fileDigests(
  filePath: string,
  algorithms: readonly DigestAlgorithm[],
): Promise<Partial<Record<DigestAlgorithm, string>>> {
  const hashes = algorithms.map((algorithm) => [algorithm, createHash(algorithm)] as const);
  for await (const chunk of createReadStream(filePath)) for (const [, hash] of hashes) hash.update(chunk as Buffer);
  return Object.fromEntries(hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')]));
}

/** A file as the catalog describes it: one form, or others it also accepts. */
export type CheckedFile = FileDigests & { name: string; alsoAccepted?: readonly FileDigests[] };

/** Whether a file of this size can be the file (its size or that of another accepted form; any size when none is known). */
export function sizeAccepted(file: CheckedFile, bytes: number): boolean {
  return [file, ...(file.alsoAccepted ?? [])].some((form) => form.bytes === undefined || form.bytes === bytes);
}

const givenDigests = (form: FileDigests): DigestAlgorithm[] => digestAlgorithms.filter((algorithm) => form[algorithm] !== undefined);

/**
 * Checks a file against its size and every digest given (of one of its accepted forms); returns the problem, stated
 * against the catalog's main form, or undefined. `requireDigest`: a form without any digest is not enough (catalog
 * files); files checked on the way (joined parts) may have a size only.
 */
export async function checkFile(file: CheckedFile, filePath: string, requireDigest = true): Promise<string | undefined> {
  let size: number;
  try {
    size = (await stat(filePath)).size;
  } catch {
    return `${file.name} is missing`;
  }
  const forms = [file, ...(file.alsoAccepted ?? [])].filter((form) => form.bytes === undefined || form.bytes === size);
  if (forms.length === 0) return `${file.name} has ${size} bytes, expected ${file.bytes}`;
  const actual = await fileDigests(filePath, [...new Set(forms.flatMap(givenDigests))]);
  const mismatch = (form: FileDigests): DigestAlgorithm | 'none' | undefined => {
    const given = givenDigests(form);
    if (given.length === 0) return requireDigest ? 'none' : undefined;
    return given.find((algorithm) => actual[algorithm] !== form[algorithm]);
  };
  if (forms.some((form) => mismatch(form) === undefined)) return undefined;
  const [form] = forms as [FileDigests];
  const algorithm = mismatch(form)!;
  return algorithm === 'none'
    ? `${file.name} has no digest to be checked by`
    : `${file.name} has ${algorithm} ${actual[algorithm]}, expected ${form[algorithm]}`;
}
