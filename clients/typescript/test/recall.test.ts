// The recall helpers against the live provider: aboveMinScore keeps the results of a real
// recall answer at or above a floor (and refuses a floor off the 0-1 scale); recallMatch reads
// hybrid/6's extension and answers undefined from an engine that does not write it.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { MemoryClient, aboveMinScore, recallMatch } from "spoke-memory-client";

import { connected, live, skip } from "./env.js";

describe("recall helpers", { skip }, () => {
  let client: MemoryClient;

  before(async () => {
    client = await connected();
    await client.subjects.ensure({ space_id: live.space, subject_id: "user:floor" });
    for (const text of ["Ada prefers green tea.", "Ada drinks tea at noon.", "Ada likes tea and cake."]) {
      await client.records.create({
        space_id: live.space,
        subject_id: "user:floor",
        kind: "fact",
        content: { text },
        placement: { scope: "shared" },
      });
    }
  });

  test("aboveMinScore keeps what reaches the floor", async () => {
    const answer = await client.recall({
      space_id: live.space,
      subject_id: "user:floor",
      query: { text: "Ada green tea" },
    });
    const scores = answer.recall.results.map((r) => r.score);
    assert.equal(scores.length, 3);
    assert.ok(scores[0]! > scores[2]!);
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a)); // never rising down the list
    const floor = (scores[0]! + scores[2]!) / 2;
    const kept = aboveMinScore(answer, floor);
    assert.deepEqual(
      kept.map((r) => r.score),
      scores.filter((s) => s >= floor),
    );
    assert.ok(kept.length < scores.length && kept.length > 0);
    assert.equal(aboveMinScore(answer, 0).length, 3);
    assert.throws(() => aboveMinScore(answer, 1.5), RangeError);
    assert.throws(() => aboveMinScore(answer, Number.NaN), RangeError);
    const engine = answer.recall.engine_policy_version;
    for (const result of answer.recall.results) {
      const match = recallMatch(result);
      if (engine === "hybrid/6") {
        assert.equal(typeof match?.lexical, "boolean");
        assert.equal(typeof match?.vector, "boolean");
        assert.equal(typeof match?.cosine === "number", match?.vector);
      } else {
        assert.equal(match, undefined);
      }
    }
  });
});
