"""The optional LLM summariser: ``OpenAISummariser`` asks an OpenAI-compatible endpoint for
one chat completion per cluster; it is used only when configured
(``summariser = "openai"`` with ``openai_base_url`` and ``openai_model``), never in the
default path or in tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphmem.config import ConsolidationConfig
from graphmem.errors import ConfigError

if TYPE_CHECKING:
    from graphmem.consolidation.summarise.phrases import KeyPhrases
    from graphmem.consolidation.summarise.protocol import ClusterMember


class OpenAISummariser:
    """One chat completion on an OpenAI-compatible endpoint per cluster (only when
    configured: ``summariser = "openai"``, ``openai_base_url``, ``openai_model``).

    Example:
        >>> from graphmem.consolidation.summarise import make_summariser
        >>> cfg = ConsolidationConfig(summariser="openai")
        >>> isinstance(make_summariser(cfg), OpenAISummariser)  # built, never called here
        True
    """

    def __init__(self, config: ConsolidationConfig) -> None:
        self.config = config

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str:
        config, texts = self.config, [m.content for m in members]
        if not (config.openai_base_url and config.openai_model):
            raise ConfigError("the openai summariser needs openai_base_url and openai_model")
        import httpx

        key = config.openai_api_key.get_secret_value() if config.openai_api_key else ""
        prompt = ("Summarise these related memories of an AI agent in at most "
                  f"{config.max_summary_chars} characters, keeping names, numbers and dates:\n- "
                  + "\n- ".join(texts))
        response = httpx.post(f"{config.openai_base_url.rstrip('/')}/chat/completions",
                              headers={"Authorization": f"Bearer {key}"}, timeout=60,
                              json={"model": config.openai_model,
                                    "messages": [{"role": "user", "content": prompt}]})
        response.raise_for_status()
        text = str(response.json()["choices"][0]["message"]["content"]).strip()
        return text[: config.max_summary_chars]
