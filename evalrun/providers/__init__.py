"""Provider construction (owner: run engine).

    build(spec: ProviderSpec, base_dir: str) -> Provider

Kinds: echo, exec:CMD, file://provider.py[:call_api], http(s)://..., and every other id goes to litellm
(providers/litellm_.py; promptfoo-style ids mapped to litellm ids there). Importing this package never
imports litellm.
"""
