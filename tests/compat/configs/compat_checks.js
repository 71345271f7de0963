module.exports = {
  short: (output, context) => output.length < 8,
  graded: (output, context) => ({ pass: output.includes(context.vars.expected), score: 0.5, reason: 'js' }),
};
