// Written for evalrun's compat corpus: the review contract the prompt, the provider and the is-json check share.
export interface Finding {
  file: string;
  severity: "critical" | "major" | "minor";
  category: string;
  summary: string;
}

export interface Review {
  verdict: "approve" | "request-changes";
  findings: Finding[];
}

export const REVIEW_INSTRUCTIONS: string =
  "You review pull requests. Report only concrete defects, each with its file. Answer with JSON: " +
  '{"verdict": "approve" | "request-changes", "findings": [{"file", "severity", "category", "summary"}]}.';

export function reviewJsonSchema(): Record<string, unknown> {
  return {
    type: "object",
    required: ["verdict", "findings"],
    properties: {
      verdict: { type: "string", enum: ["approve", "request-changes"] },
      findings: {
        type: "array",
        items: {
          type: "object",
          required: ["file", "severity", "summary"],
          properties: { file: { type: "string" }, severity: { type: "string" }, summary: { type: "string" } },
        },
      },
    },
  };
}
