// Written for evalrun's compat corpus: checks on the Markdown job-match reply.
type AssertionResult = { pass: boolean; score: number; reason: string };

export function assertNotJson(output: string): AssertionResult {
  try {
    JSON.parse(output);
    return { pass: false, score: 0, reason: "Output is JSON, expected Markdown" };
  } catch {
    return { pass: true, score: 1, reason: "Output is not JSON" };
  }
}

export function assertMentionsPosting(output: string, context: { vars: Record<string, string> }): AssertionResult {
  const title = (context.vars.jobDescription ?? "").split("\n")[0].trim();
  const pass = title !== "" && output.includes(title);
  return { pass, score: pass ? 1 : 0, reason: pass ? `mentions ${title}` : "does not mention the posting's title" };
}
