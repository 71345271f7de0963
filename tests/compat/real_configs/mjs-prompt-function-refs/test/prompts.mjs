// Written for evalrun's compat corpus: a promptfoo prompt function ({vars}) -> prompt text.
export function documentation_rag({ vars }) {
  return `Using the Test APIs of the test module, explain this test:\n${vars.test_file}`;
}
