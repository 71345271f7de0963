// Written for evalrun's compat corpus: upper-cases the output, as the example's transform does.
module.exports = (output, context) => output.toUpperCase();
