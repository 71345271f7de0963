// Written for evalrun's compat corpus: checks on the Markdown resume review.
type AssertionResult = { pass: boolean; score: number; reason: string };

export function assertNotJson(output: string): AssertionResult {
  try {
    JSON.parse(output);
    return { pass: false, score: 0, reason: "Output is JSON, expected Markdown" };
  } catch {
    return { pass: true, score: 1, reason: "Output is not JSON" };
  }
}

export function assertScoresLine(output: string): AssertionResult {
  const first = output.trim().split("\n")[0] ?? "";
  const pass = /^SCORES:\s*overall=\d+/.test(first);
  return { pass, score: pass ? 1 : 0, reason: pass ? "scores line first" : `first line: ${first.slice(0, 40)}` };
}

export function assertMarkdownBodyNonEmpty(output: string): AssertionResult {
  const body = output.split("\n").slice(1).join("\n").trim();
  return { pass: body.length > 0, score: body.length > 0 ? 1 : 0, reason: `${body.length} characters of body` };
}
