module.exports = class {
  id() { return 'lp'; }
  async callApi(prompt) {
    const spec = JSON.parse(prompt);
    return { output: spec.output, logProbs: spec.logProbs };
  }
};
