// Written for evalrun's compat corpus (not promptfoo's file): passes when the output is at least
// `config.minLength` characters long (the assertion's own `config`, as context.config).
module.exports = (output, context) => {
  const min = Number(context.config?.minLength ?? 0);
  return { pass: output.length >= min, score: output.length >= min ? 1 : 0,
           reason: `length ${output.length}, minimum ${min}` };
};
