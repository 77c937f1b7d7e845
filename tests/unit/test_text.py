from datetime import UTC, datetime

from graphmem.rules.text import Analyzer, content_hash, date_terms, preview, token_estimate


def test_terms_drop_stop_words_and_stem() -> None:
    a = Analyzer()
    assert a.terms("The migrations were running on the databases") == [
        "migrat", "run", "databas"]
    assert a.query_terms("run running runs") == ["run"]


def test_index_text_appends_date() -> None:
    a = Analyzer()
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert date_terms(when) == ["8", "may", "2023"]
    assert a.index_text("Went hiking", when) == "went hike 8 may 2023"


def test_content_hash_ignores_whitespace_only() -> None:
    assert content_hash("a  b\n") == content_hash(" a b")
    assert content_hash("a b") != content_hash("a c")


def test_preview_and_tokens() -> None:
    text = "word " * 40
    p = preview(text, 80)
    assert len(p) <= 80 and p.endswith("…")
    assert preview("short", 80) == "short"
    assert token_estimate("abcd" * 10) == 10
