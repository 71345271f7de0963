// Written for evalrun's compat corpus: named assertion functions over the review JSON.
import type { Finding, Review } from "./src/criteria.ts";

interface GradingResult {
  pass: boolean;
  score: number;
  reason: string;
}

function result(pass: boolean, reason: string): GradingResult {
  return { pass, score: pass ? 1 : 0, reason };
}

function isSevere(finding: Finding): boolean {
  return finding.severity === "critical" || finding.severity === "major";
}

/** A non-JSON reply fails as a bad reply rather than as a crash inside the assertion. */
function condition(check: (review: Review) => GradingResult) {
  return (output: string): GradingResult => {
    let review: Review;
    try {
      review = JSON.parse(output) as Review;
    } catch {
      return result(false, "Output is not JSON, so the fixture condition cannot be evaluated.");
    }
    return check(review);
  };
}

export const cleanPr = condition((review) =>
  result(review.findings.length === 0 && review.verdict === "approve", `verdict ${review.verdict}`),
);

export const limitDrift = condition((review) => {
  const hit = review.findings.find((f) => isSevere(f) && /migration|constraint|1000/i.test(f.summary));
  return result(hit !== undefined, hit ? hit.summary : "no severe finding about the column limit");
});

export const missingRls = condition((review) => {
  const hit = review.findings.find((f) => isSevere(f) && /rls|row level security|polic/i.test(f.summary));
  return result(hit !== undefined && review.verdict === "request-changes", hit ? hit.summary : "no RLS finding");
});
