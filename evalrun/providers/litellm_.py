"""The only module that imports litellm, lazily, on the first model call (owner: LLM transport).

    to_litellm_model(provider_id) -> str              'openai:chat:gpt-4o' -> 'openai/gpt-4o', litellm ids pass through
    normalise_params(config) -> dict                 promptfoo keys (apiBaseUrl, apiKey, apiKeyEnvar, ...) -> litellm
    async chat_completion(model, messages, *, params, use_cache=True, on_retry=None) -> Output
        one chat completion through the response cache and the retry policy; Output.raw = response dict;
        raises ProviderError after the last retry.
"""
