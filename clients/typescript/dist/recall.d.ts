/**
 * Hand-written helpers of recall answers: `aboveMinScore`, `recallMatch`.
 */
import type { RecallResponse, RecallResultResultsItem } from "./types.js";
/** The record extension in which the hybrid/5 engine says which signals matched a result. */
export declare const MATCH_KEY = "spoke-recall-match";
/** Which signals matched a recall result (hybrid/5, docs/recall.md#scores). */
export interface RecallMatch {
    lexical: boolean;
    term_fraction?: number;
    vector: boolean;
    cosine?: number;
    boosts: string[];
}
/**
 * The results of a `memory.recall` answer scoring at least `minScore` (0 to 1), best first.
 * With the hybrid/5 engine a score is calibrated: one threshold (the provider's documented one,
 * docs/recall.md#scores) means the same for every query, so "nothing relevant is remembered"
 * reads as an empty list. With other engines scores are relative to the query's best match; the
 * floor then only trims the tail. Throws a RangeError for a floor off the 0-1 scale.
 */
export declare function aboveMinScore(answer: RecallResponse, minScore: number): RecallResultResultsItem[];
/** The signals that matched a recall result, or undefined from an engine that does not say. */
export declare function recallMatch(result: RecallResultResultsItem): RecallMatch | undefined;
