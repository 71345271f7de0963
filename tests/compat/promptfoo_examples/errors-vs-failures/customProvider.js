// Written for evalrun's compat corpus (not promptfoo's file): a provider class that errors on "!ERROR!"
// and otherwise asks the OpenAI-compatible server at OPENAI_BASE_URL (tests/fakeserver.py in the corpus run).
class EchoingProvider {
  constructor(options) {
    this.providerId = options.id || 'custom provider';
    this.config = options.config || {};
  }

  id() {
    return this.providerId;
  }

  async callApi(prompt) {
    if (prompt.includes('!ERROR!')) {
      throw new Error('Forced error: ' + prompt);
    }
    const base = process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
    const res = await fetch(base.replace(/\/$/, '') + '/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
      body: JSON.stringify({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: prompt }] }),
    });
    const data = await res.json();
    return {
      output: data.choices[0].message.content,
      tokenUsage: { total: data.usage?.total_tokens, prompt: data.usage?.prompt_tokens,
                    completion: data.usage?.completion_tokens },
    };
  }
}

module.exports = EchoingProvider;
