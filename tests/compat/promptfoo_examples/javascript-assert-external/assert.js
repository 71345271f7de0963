// Written for evalrun's compat corpus: the example's returned result (a pass with nested component results).
module.exports = (output, context) => {
  const text = output.toLowerCase();
  return {
    pass: true,
    score: 0.75,
    reason: 'Looks good to me',
    componentResults: [
      { pass: text.includes('bananas'), score: 0.5, reason: 'Contains banana', namedScores: { 'Uses banana': 1.0 } },
      { pass: text.includes('yellow'), score: 0.5, reason: 'Contains yellow', namedScores: { Yellowish: 0.66 } },
    ],
  };
};
