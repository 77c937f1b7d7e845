"""Summaries of a cluster: extractive and deterministic by default (the members nearest the
centroid, key phrases by TF-IDF, bounded length); an OpenAI-compatible endpoint only when
configured (never in the default path or in tests)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphmem.config import ConsolidationConfig
from graphmem.errors import ConfigError
from graphmem.text import normalise_content

log = logging.getLogger(__name__)


class KeyPhrases:
    """TF-IDF over all of a run's candidates, fitted once; ``top(texts, n)`` gives the terms
    (1-2 words) that most distinguish a cluster from that background."""

    def __init__(self, background: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer: Any = TfidfVectorizer(stop_words="english", ngram_range=(1, 2),
                                               min_df=1,
                                               token_pattern=r"(?u)\b[^\W\d_][^\W_]+\b")
        try:
            self.vectorizer.fit(list(background))
            self.terms = self.vectorizer.get_feature_names_out()
        except ValueError:  # nothing but stop words
            self.vectorizer = None

    def top(self, texts: Sequence[str], n: int) -> list[str]:
        if n <= 0 or not texts or self.vectorizer is None:
            return []
        weights = np.asarray(self.vectorizer.transform([" ".join(texts)]).todense()).ravel()
        return [str(self.terms[i]) for i in np.argsort(-weights, kind="stable")[:n]
                if weights[i] > 0]


def extractive(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
               config: ConsolidationConfig) -> str:
    """Key phrases, then the members nearest the centroid (distinct ones), within a bound."""
    centroid = vectors.mean(axis=0)
    order = np.argsort(-(vectors @ centroid), kind="stable")
    top = phrases.top(texts, config.key_phrases)
    head = f"{len(texts)} related memories"
    head += f" about {', '.join(top)}." if top else "."
    parts, seen = [head], set()
    for i in order:
        sentence = normalise_content(texts[int(i)])
        key = sentence.lower()[:60]
        if key in seen:
            continue
        seen.add(key)
        if sum(len(p) + 1 for p in parts) + len(sentence) > config.max_summary_chars:
            break
        parts.append(sentence)
    text = " ".join(parts)
    return text[: config.max_summary_chars]


def openai_summary(texts: Sequence[str], config: ConsolidationConfig) -> str:
    """One chat completion on an OpenAI-compatible endpoint (only when configured)."""
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


def summarise(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
              config: ConsolidationConfig) -> str:
    if config.summariser == "openai":
        return openai_summary(texts, config)
    return extractive(texts, vectors, phrases, config)
