// Written for evalrun's compat corpus (not promptfoo's file): upper-cases the output, noting the topic.
module.exports = (output, context) => `${output.toUpperCase()} (${context.vars.topic})`;
