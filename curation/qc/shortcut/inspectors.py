"""Inspectors: who tries to solve a task from metadata alone.

`LexicalInspector` needs no model: it picks the option whose text shares the most
character n-grams with the metadata, when the margin is clear. `OpenAIInspector`
asks any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, DeepSeek, ...), with
bounded concurrency and retries; its key comes from the environment only.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from curation.core.config import InspectorConfig, secret
from curation.qc.shortcut.prompts import CANNOT_ANSWER

_CJK = re.compile(r"[\u4e00-\u9fff]")


def ngrams(text: str, n: int = 2) -> set[str]:
    text = re.sub(r"\s+", "", text.lower())
    return {text[i:i + n] for i in range(max(len(text) - n + 1, 0))} if len(text) >= n else ({text} if text else set())


@dataclass
class LexicalInspector:
    name: str = "lexical"
    margin: float = 0.2
    minimum: float = 0.34
    samples: int = 1
    temperature: float = 0.0
    endpoint: str = "builtin"
    model: str = "lexical-2gram"

    def answer_label(self, metadata: str, options: dict[str, str], skip: set[str]) -> str:
        """An option letter when one option's n-grams clearly overlap the metadata most."""
        meta = ngrams(metadata)
        scores = []
        for letter, text in sorted(options.items()):
            grams = ngrams(text)
            if letter in skip or not grams:
                continue
            scores.append((len(grams & meta) / len(grams), letter))
        scores.sort(reverse=True)
        if not scores or scores[0][0] < self.minimum:
            return CANNOT_ANSWER
        if len(scores) > 1 and scores[0][0] - scores[1][0] < self.margin:
            return CANNOT_ANSWER
        return scores[0][1]


class InspectorError(Exception):
    """An endpoint that could not give an answer (refused, unreachable, malformed reply): the task it was
    asked about stays undecided. Any other exception is a bug and fails the run."""


class RetryableError(InspectorError):
    """A rate limit, a 5xx, a timeout or a dropped connection that persisted through every retry."""


class ResponseError(InspectorError):
    """An answer that will not come by retrying: a 4xx, or a reply that is not a chat completion."""


@dataclass
class OpenAIInspector:
    """An OpenAI-compatible endpoint as configured, with its key already resolved."""

    spec: InspectorConfig
    api_key: str = field(default="", repr=False)  # from spec.api_key_env when built; never stored

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def temperature(self) -> float:
        return self.spec.temperature

    @property
    def samples(self) -> int:
        return self.spec.samples

    @property
    def api_key_env(self) -> str | None:
        return self.spec.api_key_env or None

    @property
    def endpoint(self) -> str:
        return self.spec.base_url.rstrip("/")

    def client(self) -> Any:
        from openai import AsyncOpenAI

        # A local server without auth still needs some key string in the client.
        return AsyncOpenAI(base_url=self.endpoint, api_key=self.api_key or "no-key", max_retries=0,
                           timeout=self.spec.timeout_s)

    async def complete(self, client: Any, prompt: str, sample: int) -> str:
        """One completion, retried with jittered exponential backoff on 429, 5xx, timeouts
        and dropped connections (`RetryableError` when they persist); a 4xx or a reply that is no
        chat completion is a `ResponseError` at once. Nothing else is caught: a bug stays a bug."""
        import openai

        retries = self.spec.max_retries
        for attempt in range(retries + 1):
            try:
                # the reply's JSON read as it is: a typed response object per answer costs more than the
                # rest of the request, and only the text is kept (bench/shortcut.py)
                response = await client.chat.completions.with_raw_response.create(
                    model=self.model, messages=[{"role": "user", "content": prompt}],
                    temperature=self.temperature, max_tokens=self.spec.max_tokens,
                    seed=sample if self.temperature > 0 else None)
                return _content(self.name, json.loads(response.http_response.content))
            except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                    openai.InternalServerError) as exc:
                if attempt == retries:
                    raise RetryableError(f"{self.name}: gave up after {attempt + 1} tries "
                                         f"({type(exc).__name__})") from None
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code != 429:
                    raise ResponseError(f"{self.name}: HTTP {exc.status_code}: {str(exc)[:200]}") from None
                if attempt == retries:
                    raise RetryableError(f"{self.name}: HTTP {exc.status_code} after {attempt + 1} tries") from None
            except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
                raise ResponseError(f"{self.name}: the reply is not a chat completion ({str(exc)[:200]})") from None
            await asyncio.sleep(self.spec.backoff_s * (2 ** attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")


def _content(name: str, reply: Any) -> str:
    """The text of a completion; a server that answered 200 with something else is a `ResponseError`."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
        else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(content, str | None):
        raise ResponseError(f"{name}: the reply is not a chat completion ({str(reply)[:200]!r})")
    return content or ""


def make_inspectors(specs: list[InspectorConfig], with_keys: bool = True) -> list[LexicalInspector | OpenAIInspector]:
    """Inspectors from their config; a named key variable that is unset fails here, before any request.
    `with_keys=False` builds them to describe a configuration only (they cannot be asked)."""
    out: list[LexicalInspector | OpenAIInspector] = []
    for spec in specs:
        if spec.kind == "lexical":
            out.append(LexicalInspector(name=spec.name, margin=spec.margin, minimum=spec.minimum))
            continue
        key = secret(spec.api_key_env, f"the API key of inspector {spec.name}") if spec.api_key_env and with_keys \
            else ""
        out.append(OpenAIInspector(spec, api_key=key))
    return out
