/**
 * Hand-written helpers of recall answers: `aboveMinScore`, `recallMatch`.
 */
import type { RecallResponse, RecallResultResultsItem } from "./types.js";
/** The record extension in which the hybrid/6 engine says which signals matched a result. */
export declare const MATCH_KEY = "spoke-recall-match";
/** Which signals matched a recall result (hybrid/6, docs/recall.md#scores). */
export interface RecallMatch {
    lexical: boolean;
    vector: boolean;
    cosine?: number;
}
/**
 * The results of a `memory.recall` answer scoring at least `minScore` (0 to 1), best first.
 * With the hybrid/6 engine (the provider's default with its semantic model) a score is calibrated:
 * one threshold (the provider's documented one, docs/recall.md#scores) means the same for every
 * query, so "nothing relevant is remembered" reads as an empty list. With engine/2 scores are
 * relative to the query's best match; the floor then only trims the tail. Throws a RangeError for a floor off the 0-1 scale.
 */
export declare function aboveMinScore(answer: RecallResponse, minScore: number): RecallResultResultsItem[];
/** The signals that matched a recall result, or undefined from an engine that does not say. */
export declare function recallMatch(result: RecallResultResultsItem): RecallMatch | undefined;
