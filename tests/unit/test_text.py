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


def test_threads_stem_as_one_thread_does() -> None:
    """A Snowball stemmer keeps the word it works on in itself: threads sharing one stemmer
    (consolidation's key phrases beside a write's keywords) stemmed into each other's words,
    raised IndexError (a 500) or, memoised, kept a wrong stem for the process."""
    import sys
    import threading

    import snowballstemmer

    words = [f"{stem}{end}" for stem in ("connect", "relat", "nation", "generous", "organiz",
                                         "deploy", "migrat", "operat", "sensitiv", "hopeful")
             for end in ("ational", "ization", "fulness", "iveness", "ically", "ements", "ing",
                         "ed", "ness", "ousness")]
    expected = snowballstemmer.stemmer("english").stemWords(words)
    got: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def stem(n: int) -> None:
        try:
            for _ in range(20):  # a memo of its own each time: every word goes to the stemmer
                a = Analyzer()
                got[n] = [a.terms(w)[0] for w in words]
                if got[n] != expected:
                    return
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(5):
            threads = [threading.Thread(target=stem, args=(n,)) for n in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors[0]
            assert all(v == expected for v in got.values())
    finally:
        sys.setswitchinterval(interval)
