"""`exec:CMD`: runs a command per case with argv `prompt, JSON(options), JSON(context)`; stdout is the output.

The command runs in the config's folder. A non-zero exit status is a provider error carrying stderr's tail.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time

from evalrun.errors import ConfigError, ProviderError
from evalrun.providers.base import CallContext, prompt_text
from evalrun.types import Messages, Output, ProviderSpec


class ExecProvider:
    def __init__(self, spec: ProviderSpec, base_dir: str) -> None:
        self.id = spec.id
        self.label = spec.name
        self.base_dir = base_dir
        self.config = dict(spec.config)
        try:
            self.argv = shlex.split(spec.id[len("exec:"):].strip())
        except ValueError as e:
            raise ConfigError.at(spec.loc, f"cannot parse command {spec.id!r}: {e}", key="providers") from None
        if not self.argv:
            raise ConfigError.at(spec.loc, "exec: provider without a command", key="providers",
                                 hint="write e.g. `exec: python my_app.py`")

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        options = json.dumps({"config": self.config}, default=str)
        context = json.dumps({"vars": ctx.vars, "prompt": {"label": ctx.prompt_label}}, default=str)
        start = time.perf_counter()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, prompt_text(prompt), options, context, cwd=self.base_dir,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as e:
            raise ProviderError(f"exec: cannot start {self.argv[0]!r}: {e}") from None
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:  # per-case timeout or Ctrl-C: do not leave the process behind
            if proc.returncode is None:
                proc.kill()
            raise
        latency = (time.perf_counter() - start) * 1000.0
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-500:]
            raise ProviderError(f"exec: command exited with status {proc.returncode}: {tail or '(no stderr)'}")
        return Output(text=out.decode("utf-8", "replace").rstrip("\n"), latency_ms=latency)
