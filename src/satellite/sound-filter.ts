/**
 * The pre-upload sound classifier (satellite protocol §2 "Config push": classifierMinBirdProb,
 * excludedClassifierCategories): when the satellite runs a model (`--classifier`, optional, ONNX
 * Runtime), a chunk that passed the silence gate is classified first, and is not uploaded when
 * it holds one of the excluded categories (human voice, anthropogenic noise, …) or no bird likely
 * enough. The satellite speaks the protocol alone, so the model comes in through this interface;
 * `chorus satellite` wires the hub's ONNX runner into it (src/inference/sound-classifier.ts).
 */

/** One output of the model for a chunk, with the detection category its label maps to. */
export interface SoundScore {
  label: string;
  /** bird, amphibian, insect, anthropogenic, human_voice or other_animal. */
  category: string;
  confidence: number;
}

export interface SoundClassifier {
  /** Every output's confidence for one chunk (16-bit samples at 48 kHz). */
  classify(samples: Int16Array): Promise<SoundScore[]>;
  close?(): Promise<void>;
  readonly description: string;
}

export interface SoundFilterConfig {
  classifierMinBirdProb: number;
  excludedClassifierCategories: readonly string[];
}

/**
 * How sure the model must be of an excluded category to drop the chunk. The config push carries
 * no such number (the protocol's fields are exact); half is where a sigmoid output says "more
 * likely than not", and the hub's own voice removal defaults to the same.
 */
export const CATEGORY_DROP_CONFIDENCE = 0.5;

/** The FilterStats counter each excluded category's drops go to. */
export const REJECTED_COUNTER = {
  amphibian: 'rejectedAmphibian',
  insect: 'rejectedInsect',
  anthropogenic: 'rejectedAnthropogenic',
  human_voice: 'rejectedHumanVoice',
  other_animal: 'rejectedOtherAnimal',
} as const;

export type SoundVerdict =
  { pass: true; birdProb: number } | { pass: false; birdProb: number; reason: 'classifier' | keyof typeof REJECTED_COUNTER };

/** Whether a classified chunk goes on to upload: an excluded category first (privacy), then the bird probability. */
export function judgeSound(scores: readonly SoundScore[], config: SoundFilterConfig): SoundVerdict {
  const best = new Map<string, number>();
  for (const s of scores) best.set(s.category, Math.max(best.get(s.category) ?? 0, s.confidence));
  const birdProb = best.get('bird') ?? 0;
  let drop: { reason: keyof typeof REJECTED_COUNTER; confidence: number } | null = null;
  for (const category of config.excludedClassifierCategories) {
    if (!(category in REJECTED_COUNTER)) continue;
    const c = best.get(category) ?? 0;
    if (c >= CATEGORY_DROP_CONFIDENCE && (!drop || c > drop.confidence))
      drop = { reason: category as keyof typeof REJECTED_COUNTER, confidence: c };
  }
  if (drop) return { pass: false, birdProb, reason: drop.reason };
  if (birdProb < config.classifierMinBirdProb) return { pass: false, birdProb, reason: 'classifier' };
  return { pass: true, birdProb };
}
