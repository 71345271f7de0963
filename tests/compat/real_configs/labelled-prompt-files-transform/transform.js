// Written for evalrun's compat corpus: keep what follows a `Signature:` line (the answer after the planning text),
// else the output as it is. An ES module default export in a .js file, as the config's source has it.
function getTransform(output, context) {
  if (!output || typeof output !== 'string') {
    return output;
  }
  const lines = output.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim().startsWith('Signature:')) {
      return lines.slice(i + 1).join('\n').trim();
    }
  }
  return output;
}

export default getTransform;
