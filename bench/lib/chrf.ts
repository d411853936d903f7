/**
 * chrF (Popović 2015) with sacrebleu's defaults: character 1- to 6-grams with whitespace removed, case kept, beta 2; the
 * F-scores of the orders both sides have n-grams of are averaged. Corpus chrF sums the n-gram counts over sentences.
 */
const maxOrder = 6;
const beta = 2;

export interface ChrfStatistics {
  /** Per order 1..6: hypothesis n-grams, reference n-grams, matched n-grams. */
  orders: Array<{ hypothesis: number; reference: number; matched: number }>;
}

function ngrams(text: string, order: number): Map<string, number> {
  const characters = [...text.replace(/\s+/g, '')];
  const counts = new Map<string, number>();
  for (let i = 0; i + order <= characters.length; i++) {
    const gram = characters.slice(i, i + order).join('');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

export function chrfStatistics(reference: string, hypothesis: string): ChrfStatistics {
  const orders = [];
  for (let order = 1; order <= maxOrder; order++) {
    const ref = ngrams(reference, order);
    const hyp = ngrams(hypothesis, order);
    let matched = 0;
    for (const [gram, count] of hyp) matched += Math.min(count, ref.get(gram) ?? 0);
    const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    orders.push({ hypothesis: total(hyp), reference: total(ref), matched });
  }
  return { orders };
}

/** chrF in 0..100 of summed statistics (one sentence, or a corpus). */
export function chrfScore(statistics: ChrfStatistics[]): number {
  let sum = 0;
  let counted = 0;
  for (let i = 0; i < maxOrder; i++) {
    const hypothesis = statistics.reduce((n, s) => n + s.orders[i]!.hypothesis, 0);
    const reference = statistics.reduce((n, s) => n + s.orders[i]!.reference, 0);
    const matched = statistics.reduce((n, s) => n + s.orders[i]!.matched, 0);
    if (hypothesis === 0 || reference === 0) continue;
    const precision = matched / hypothesis;
    const recall = matched / reference;
    counted++;
    if (precision + recall > 0) sum += ((1 + beta ** 2) * precision * recall) / (beta ** 2 * precision + recall);
  }
  return counted === 0 ? 0 : (100 * sum) / counted;
}

export function chrf(reference: string, hypothesis: string): number {
  return chrfScore([chrfStatistics(reference, hypothesis)]);
}
