/**
 * Hand-written helpers of recall answers: `aboveMinScore`, `recallMatch`.
 */
/** The record extension in which the hybrid/6 engine says which signals matched a result. */
export const MATCH_KEY = "spoke-recall-match";
/**
 * The results of a `memory.recall` answer scoring at least `minScore` (0 to 1), best first.
 * With the hybrid/6 engine (the provider's default with its semantic model) a score is calibrated:
 * one threshold (the provider's documented one, docs/recall.md#scores) means the same for every
 * query, so "nothing relevant is remembered" reads as an empty list. With engine/2 scores are
 * relative to the query's best match; the floor then only trims the tail. Throws a RangeError for a floor off the 0-1 scale.
 */
export function aboveMinScore(answer, minScore) {
    if (!(minScore >= 0 && minScore <= 1)) {
        throw new RangeError(`minScore must be between 0 and 1, not ${String(minScore)}`);
    }
    return answer.recall.results.filter((result) => result.score >= minScore);
}
/** The signals that matched a recall result, or undefined from an engine that does not say. */
export function recallMatch(result) {
    const match = result.record.extensions[MATCH_KEY];
    return match !== null && typeof match === "object" ? match : undefined;
}
