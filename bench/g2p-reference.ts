/**
 * English phonemes for Kokoro against the phonemiser it learnt from (issue 32, point 7): misaki 0.9.4 with spaCy's
 * en_core_web_sm part-of-speech tags, side by side in one run. Per corpus: the words whose lexicon entry is read by part
 * of speech ("close", "use", "read") that get misaki's reading, and the sentences whose whole phoneme string is misaki's.
 * Corpora, fixed before any choice: `tuning` is the GPL-3 and Apache-2.0 licence texts (/usr/share/common-licenses),
 * where the tag mapping of text/part-of-speech.ts was chosen; `held-out` is 400 sentences of Python's reference prose
 * (pydoc_data.topics, shuffled with seed 1).
 * The reference is never a dependency: `--python PATH` (a venv's python with misaki[en]==0.9.4 and a spaCy
 * en_core_web_sm model package installed) and `--spacy-model DIR` (that model's directory, with config.cfg).
 * Results: bench/results/g2p-reference.json.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { modelFile } from '../test/helpers/models.js';
import { EnglishLexicon } from '../src/operations/synthesize/engines/english-lexicon.js';
import { kokoroPhonemes } from '../src/operations/synthesize/engines/kokoro-phonemes.js';

const { values: args } = parseArgs({ options: { python: { type: 'string' }, 'spacy-model': { type: 'string' } } });
if (!args.python || !args['spacy-model']) {
  process.stderr.write('usage: bench/g2p-reference.ts --python PATH --spacy-model DIR\n');
  process.exit(2);
}
const benchDir = path.dirname(new URL(import.meta.url).pathname);

/** Sentences of plain words (no digits or symbols a normaliser would rewrite), 30-250 characters. */
const corpusScript = `
import json, random, re, sys
def sentences(text):
    text = re.sub(r'\\s+', ' ', text)
    return [s.strip() for s in re.split(r'(?<=[.!?])\\s+', text) if 30 < len(s.strip()) < 250 and re.fullmatch(r"[A-Za-z ,.;:'\\"()!?-]+", s.strip())]
tuning = sentences(' '.join(open('/usr/share/common-licenses/' + name).read() for name in ('GPL-3', 'Apache-2.0')))
from pydoc_data.topics import topics
held_out = sentences(' '.join(topics.values()))
random.seed(1)
random.shuffle(held_out)
print(json.dumps({'tuning': list(dict.fromkeys(tuning)), 'held-out': list(dict.fromkeys(held_out[:400]))}))
`;

/** misaki's phonemes of each sentence, and the words its gold lexicon reads by part of speech. */
const referenceScript = `
import json, sys, warnings
warnings.filterwarnings('ignore')
import spacy, spacy.util
model_dir = sys.argv[1]
known = spacy.util.is_package
spacy.util.is_package = lambda name: name.startswith('en_core_web') or known(name)
load = spacy.load
spacy.load = lambda name, **kw: load(model_dir, **kw)
from misaki import en
g2p = en.G2P(trf=False, british=False, fallback=None)
sentences = json.load(sys.stdin)
print(json.dumps({s: g2p(s)[0] for s in sentences}, ensure_ascii=False))
`;

const python = (script: string, argv: string[], input?: string): string =>
  execFileSync(args.python!, ['-c', script, ...argv], { encoding: 'utf8', input, maxBuffer: 1 << 26 });

const corpora = JSON.parse(python(corpusScript, [])) as Record<'tuning' | 'held-out', string[]>;
const lexiconDir = path.dirname(await modelFile('misaki-lexicon', 'us_gold.json'));
const us = await EnglishLexicon.load(lexiconDir, 'us');
const gold = JSON.parse(readFileSync(path.join(lexiconDir, 'us_gold.json'), 'utf8')) as Record<string, unknown>;
const byPartOfSpeech = (word: string): boolean => {
  const entry = gold[word] ?? gold[word.toLowerCase()];
  return typeof entry === 'object' && entry !== null;
};

const parts: Record<string, unknown> = {};
const examples: Array<{ part: string; word: string; misaki: string; voxd: string }> = [];
for (const part of ['held-out', 'tuning'] as const) {
  const sentences = corpora[part];
  const reference = JSON.parse(python(referenceScript, [args['spacy-model']], JSON.stringify(sentences))) as Record<string, string>;
  let words = 0;
  let agreeing = 0;
  let sameSentences = 0;
  let compared = 0;
  for (const sentence of sentences) {
    const ours = await kokoroPhonemes(sentence, 'en-us', { lexicons: { us } });
    const theirs = reference[sentence]!;
    if (ours === theirs) sameSentences++;
    const written = sentence.split(/\s+/);
    const [ourWords, theirWords] = [ours.split(' '), theirs.split(' ')];
    // Word by word only where both wrote a word per written word.
    if (ourWords.length !== written.length || theirWords.length !== written.length) continue;
    compared++;
    written.forEach((w, i) => {
      const word = w.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, '');
      if (!byPartOfSpeech(word)) return;
      words++;
      if (ourWords[i] === theirWords[i]) agreeing++;
      else if (examples.length < 40) examples.push({ part, word, misaki: theirWords[i]!, voxd: ourWords[i]! });
    });
  }
  parts[part] = {
    sentences: sentences.length,
    sentencesAsMisaki: sameSentences,
    sentencesComparedWordByWord: compared,
    partOfSpeechWords: words,
    partOfSpeechWordsAsMisaki: agreeing,
    agreement: Math.round((agreeing / words) * 1000) / 1000,
  };
  process.stdout.write(`${part}: ${JSON.stringify(parts[part])}\n`);
}
writeFileSync(
  path.join(benchDir, 'results', 'g2p-reference.json'),
  `${JSON.stringify(
    {
      generatedAt: new Date().toISOString(),
      machine: { loadAverage: loadavg() },
      reference: 'misaki 0.9.4 (en.G2P, American, no fallback) with spaCy en_core_web_sm 3.8.0 tags',
      notes: [
        'partOfSpeechWords: words of the corpus whose misaki gold entry is read by part of speech (790 entries), in sentences where both phonemisers wrote one phoneme word per written word; AsMisaki: those read as misaki reads them.',
        'sentencesAsMisaki: whole phoneme strings equal (other differences: espeak-ng for words the lexicons lack, stress of capitalised words).',
      ],
      parts,
      examples,
    },
    null,
    2,
  )}\n`,
);
