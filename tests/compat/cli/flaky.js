module.exports = class {
  id() { return 'flaky'; }
  async callApi(prompt) {
    return prompt.includes('boom') ? { error: 'the provider failed on purpose' } : { output: prompt };
  }
};
