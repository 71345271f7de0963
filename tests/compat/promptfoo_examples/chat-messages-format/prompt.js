// Written for evalrun's compat corpus: a prompt function returning a short code example for the topic.
module.exports = async function ({ vars }) {
  return `Here is ${vars.topic} in ${vars.language}: ${vars.concept3}`;
};
