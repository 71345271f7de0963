// Written for evalrun's compat corpus: one prompt function for every task; `resume-import` rows switch to JSON mode
// by returning a config with the prompt.
const REVIEW_SYSTEM = "You review resumes. Start with a line `SCORES: overall=N impact=N`, then Markdown sections.";
const MATCH_SYSTEM = "You compare a resume with a job posting and explain the fit in Markdown.";
const IMPORT_SYSTEM = "You turn a resume into JSON: {contactInfo: {firstName, lastName}, experience: [...]}.";

export default function prompt({ vars }: { vars: Record<string, string> }) {
  switch (vars.task) {
    case "resume-review":
      return [
        { role: "system", content: REVIEW_SYSTEM },
        { role: "user", content: `Review this resume:\n\n${vars.resumeText}` },
      ];
    case "job-match":
      return [
        { role: "system", content: MATCH_SYSTEM },
        { role: "user", content: `Resume:\n${vars.resumeText}\n\nPosting:\n${vars.jobDescription}` },
      ];
    case "resume-import":
      return {
        prompt: [
          { role: "system", content: IMPORT_SYSTEM },
          { role: "user", content: vars.resumeText },
        ],
        config: { response_format: { type: "json_object" } },
      };
    default:
      throw new Error(`Unknown eval task: ${vars.task}`);
  }
}
