"""What a summariser is given and what it is: ``ClusterMember`` (one memory of a cluster as
the runner hands it over: content, vector, event time, source, chit-chat flag) and the
``Summariser`` protocol (members and the run's key phrases in, the summary's text out) that
the extractive and the LLM summarisers implement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from graphmem.consolidation.summarise.phrases import KeyPhrases


@dataclass(frozen=True, slots=True)
class ClusterMember:
    """One memory of a cluster as a summariser sees it (the runner builds them).

    Example:
        >>> from datetime import UTC
        >>> m = ClusterMember("Caroline: I went to a support group.", np.ones(384) / 384 ** 0.5,
        ...                   datetime(2023, 5, 8, tzinfo=UTC), "Caroline")
        >>> m.source, m.chit_chat
        ('Caroline', False)
    """

    content: str
    vector: np.ndarray  # unit embedding (float32, 384)
    #: event time (tz-aware); None when the caller does not know it (no time span then)
    created_at: datetime | None
    source: str | None = None  # speaker / agent
    chit_chat: bool = False  # is_chit_chat(analyzer, content), computed by the runner


class Summariser(Protocol):
    """What consolidation calls to write a cluster's summary: the members (and the run's
    key phrases, fitted once on all its candidates) in, the summary's text out. An operator's
    LLM summariser is one more implementation (``OpenAISummariser``).

    Example:
        >>> from graphmem.config import ConsolidationConfig
        >>> from graphmem.consolidation.summarise import ExtractiveSummariser, make_summariser
        >>> def first_member(members, phrases):  # any callable of this shape will do
        ...     return members[0].content
        >>> summariser: Summariser = first_member
        >>> isinstance(make_summariser(ConsolidationConfig()), ExtractiveSummariser)
        True
    """

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str: ...
