"""`{{ env.NAME }}` in templates: the config's `env:` over the process environment, read when a template renders
(templating.render) and when a config is checked (an unset NAME is a config error)."""

from __future__ import annotations

import os

_config_env: dict[str, str] = {}  # the config's `env:`, read before os.environ by `{{ env.NAME }}`


class _Env(dict[str, str]):
    """`{{ env.NAME }}`: the config's `env:` over the process environment; a missing name is an error. The whole
    object never renders as text (`{{ env }}` is refused at load time; this holds where no check ran)."""

    #: jinja_env's finalize and `dump` refuse to print an object of a class that says this
    render_refused = "`env` is the whole environment and is not rendered: use env.NAME"

    def __getattr__(self, name: str) -> str:
        try:
            return self[name]
        except KeyError:
            import jinja2

            raise jinja2.UndefinedError(f"environment variable {name!r} is not set") from None


def set_config_env(env: dict[str, str], *, add: bool = False) -> None:
    """The config's `env:`, read before os.environ by `{{ env.NAME }}`; `add` keeps those set before."""
    if not add:
        _config_env.clear()
    _config_env.update(env)


def namespace() -> _Env:
    """The names a template's `env` reads: the config's `env:` over the process environment."""
    merged = _Env(os.environ)
    merged.update(_config_env)
    return merged


def has(name: str) -> bool:
    """Whether `{{ env.NAME }}` would find NAME (config `env:` or the process environment)."""
    return name in _config_env or name in os.environ
