// Written for evalrun's compat corpus: the review prompt as a TypeScript prompt function returning chat messages.
import { REVIEW_INSTRUCTIONS } from "./src/criteria.ts";

/** Everything from this line on is the fixture's answer key. */
const METADATA_MARKER = /^--- FIXTURE METADATA.*$/m;

export function stripFixtureMetadata(raw: string): string {
  const match = METADATA_MARKER.exec(raw);
  const body = (match === null ? raw : raw.slice(0, match.index)).trim();
  if (body === "") throw new Error("Fixture is empty once its metadata block is stripped.");
  return body;
}

export function reviewPrompt({ vars }: { vars: { diff: string } }) {
  return [
    { role: "system", content: REVIEW_INSTRUCTIONS },
    { role: "user", content: `Review the following pull request.\n\n${stripFixtureMetadata(vars.diff)}` },
  ];
}
