// Written for evalrun's compat corpus: the analysis has key points and every stance signal a known strength.
module.exports = (output, context) => {
  let data;
  try {
    data = typeof output === 'string' ? JSON.parse(output) : output;
  } catch (e) {
    return { pass: false, score: 0, reason: `not JSON: ${e.message}` };
  }
  const points = Array.isArray(data.keyPoints) ? data.keyPoints.length : 0;
  const strengths = ['strong', 'moderate', 'weak'];
  const signals = Array.isArray(data.stanceSignals) ? data.stanceSignals : [];
  const bad = signals.filter((s) => !strengths.includes(s.strength));
  const pass = points > 0 && bad.length === 0;
  return { pass, score: pass ? 1 : 0, reason: `${points} key points, ${bad.length} bad stance signals` };
};
