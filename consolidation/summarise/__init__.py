"""Summaries of a cluster, behind one small protocol (``Summariser``): extractive and
deterministic by default, an OpenAI-compatible endpoint only when configured (never in the
default path or in tests).

The extractive summary reads, for a maintainer who sees it once::

    Caroline and Melanie, 8-12 May 2023, 17 memories about adoption agencies, LGBTQ support
    group: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
    Melanie: ... (names: Oscar; places: Sweden; dates: 7 May 2023; numbers: 3 kids)

- who (the members' speakers / sources), when (the members' event-time span), how many;
- key phrases: noun phrases ranked by TF-IDF against the run's background (``KeyPhrases``);
- 2-5 member sentences chosen by maximal marginal relevance over the members' sentences
  (relevance: half the member's cosine to the cluster centroid, half the sentence's TF-IDF
  cosine to the cluster's distinctive words, +-0.05 for a stated event or fact / a reaction;
  redundancy: the highest similarity to a sentence already chosen), shown in time order;
  greetings, thanks, praise, small talk and questions are never chosen (an opening "Hey
  Mel," is cut off the sentence it opens);
- names, places, dates and numbers the cluster's informative sentences mention
  (capitalised words not at a sentence start, place prepositions, month names / years /
  relative dates resolved against the member's event time, digits with their unit).

No model, no network, no randomness: the same members give the same text.

The modules, by what they hold: ``protocol`` (``ClusterMember``, ``Summariser``), ``words``
(the word lists and the tokenizer), ``sentences`` (splitting, greetings, judging chit-chat),
``phrases`` (``KeyPhrases``), ``facts`` (names, places, dates, numbers, the time span),
``mmr`` (choosing the sentences), ``layout`` (the bounded text, ``Summary``),
``extractive_summariser`` (``ExtractiveSummariser``) and ``llm`` (``OpenAISummariser``);
this package chooses between the last two (``make_summariser``) and keeps the entry point
for a caller that knows members only by text and vector (``extractive``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphmem.config import ConsolidationConfig
from graphmem.consolidation.summarise.extractive_summariser import ExtractiveSummariser
from graphmem.consolidation.summarise.llm import OpenAISummariser
from graphmem.consolidation.summarise.phrases import KeyPhrases
from graphmem.consolidation.summarise.protocol import ClusterMember, Summariser

__all__ = ["ClusterMember", "ExtractiveSummariser", "KeyPhrases", "OpenAISummariser",
           "Summariser", "extractive", "make_summariser"]


def make_summariser(config: ConsolidationConfig) -> Summariser:
    """The extractive summariser, or the OpenAI-compatible one when config.summariser ==
    "openai"."""
    if config.summariser == "openai":
        return OpenAISummariser(config)
    return ExtractiveSummariser(config)


def extractive(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
               config: ConsolidationConfig, chit_chat: Sequence[bool] | None = None) -> str:
    """The extractive summary of members known only by text and vector (no time span;
    speakers from "Name: " labels)."""
    flags = list(chit_chat) if chit_chat is not None else [False] * len(texts)
    members = [ClusterMember(t, np.asarray(v), None, None, c)
               for t, v, c in zip(texts, vectors, flags, strict=True)]
    return ExtractiveSummariser(config)(members, phrases)

