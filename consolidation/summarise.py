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
from graphmem.rules.text import CHIT_CHAT_WORDS, STOP_WORDS, normalise_content, strip_speaker

log = logging.getLogger(__name__)


class KeyPhrases:
    """TF-IDF over all of a run's candidates, fitted once; ``top(texts, n)`` gives the terms
    (1-2 words) that most distinguish a cluster from that background. Stop words are the
    retrieval analyser's list plus chit-chat words (one list, ``graphmem.rules.text``); speaker
    labels do not count.

    Example:
        >>> kp = KeyPhrases(["the deploy failed", "the deploy was rolled back", "lunch was good"])
        >>> "deploy" in kp.top(["the deploy failed", "the deploy was rolled back"], 2)
        True
    """

    def __init__(self, background: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        stop = sorted(STOP_WORDS | CHIT_CHAT_WORDS)
        self.vectorizer: Any = TfidfVectorizer(stop_words=stop, ngram_range=(1, 2), min_df=1,
                                               sublinear_tf=True,
                                               token_pattern=r"(?u)\b[^\W\d_][^\W_]+\b")
        try:
            self.vectorizer.fit([strip_speaker(t) for t in background])
            self.terms = self.vectorizer.get_feature_names_out()
        except ValueError:  # nothing but stop words
            self.vectorizer = None

    def top(self, texts: Sequence[str], n: int) -> list[str]:
        if n <= 0 or not texts or self.vectorizer is None:
            return []
        joined = " ".join(strip_speaker(t) for t in texts)
        weights = np.asarray(self.vectorizer.transform([joined]).todense()).ravel()
        out: list[str] = []
        for i in np.argsort(-weights, kind="stable"):
            if weights[i] <= 0 or len(out) >= n:
                break
            term = str(self.terms[i])
            # a bigram whose words are already listed, or a word inside a listed bigram, adds
            # nothing: "oat milk" and "oat" and "milk" read as one phrase
            if any(term in o.split() or o in term.split() for o in out):
                continue
            out.append(term)
        return out


def pick_sentences(texts: Sequence[str], vectors: np.ndarray, chit_chat: Sequence[bool],
                   budget: int, diversity: float = 0.3) -> list[int]:
    """Members for an extractive summary: maximal marginal relevance - centrality (cosine to
    the centroid) minus ``diversity`` x the highest similarity to a member already picked -
    so the summary covers the cluster instead of repeating its centre. Chit-chat only when
    nothing else is left; stops at ``budget`` characters."""
    centroid = vectors.mean(axis=0)
    cent = vectors @ centroid
    sims = vectors @ vectors.T
    left = [i for i in range(len(texts)) if not chit_chat[i]] or list(range(len(texts)))
    chosen: list[int] = []
    used, seen = 0, set()
    while left:
        def gain(i: int) -> float:
            overlap = max((float(sims[i, j]) for j in chosen), default=0.0)
            return float(cent[i]) - diversity * overlap

        best = max(left, key=lambda i: (gain(i), -i))
        left.remove(best)
        key = normalise_content(texts[best]).lower()[:60]
        if key in seen:
            continue
        if chosen and used + len(texts[best]) + 1 > budget:
            continue
        seen.add(key)
        chosen.append(best)
        used += len(texts[best]) + 1
    return chosen


def extractive(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
               config: ConsolidationConfig, chit_chat: Sequence[bool] | None = None) -> str:
    """"N memories about <key phrases>:" then representative members (maximal marginal
    relevance), within ``max_summary_chars``. Deterministic."""
    flags = list(chit_chat) if chit_chat is not None else [False] * len(texts)
    informative = [t for t, c in zip(texts, flags, strict=True) if not c] or list(texts)
    top = phrases.top(informative, config.key_phrases)
    head = f"{len(texts)} memories"
    head += f" about {', '.join(top)}:" if top else ":"
    budget = config.max_summary_chars - len(head) - 1
    order = pick_sentences(texts, vectors, flags, budget)
    body = " ".join(normalise_content(texts[i]) for i in order)
    return f"{head} {body}"[: config.max_summary_chars]


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
              config: ConsolidationConfig, chit_chat: Sequence[bool] | None = None) -> str:
    if config.summariser == "openai":
        return openai_summary(texts, config)
    return extractive(texts, vectors, phrases, config, chit_chat)
