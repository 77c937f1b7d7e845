"""Questions that name a time (issue 49): a synthetic benchmark to choose ``weights.time``.

Each history is one user's notes over ~15 months, a session per active day: six recurring
topics (team hikes, trips, releases, baking, the dog's vet visits, one-on-ones) happen again and
again, ~5-10 weeks apart, each time with a detail of its own (the trail, the city, what
shipped) - so a question's words match the same topic in every other month, and only the time
it names tells which. Fillers share the topics' words without their details. A quarter of the
events are written down only later, relatively ("Yesterday I flew to Lisbon ...", "Last week
we shipped ..."): the question names the event's day, the memory was written one to seven days
after it (the mentioned-time path). Question kinds: ``absolute`` (a day, a month, the last week
of a month, a season, a year, "what happened on"), ``relative`` to ``now`` (yesterday, three
days ago, last week, last Tuesday, last month, two months ago), ``mention``, ``none`` (a
unique detail, no time: the prior must not hurt them) and ``near``: the month named is
misremembered, the event was 1-3 days or 2-3 weeks outside it and the topic has none inside
it - the counterweight, where a prior too strong puts the month's other memories first (``timed``
sums absolute, relative and mention). The evidence of a question is every
memory of its topic whose *event* falls in the window it names (our windows, not the parser's;
seasons northern meteorological, weeks Monday to Sunday). Texts written for this benchmark,
deterministic from the seed; nothing from LoCoMo. ``graphmem bench time``.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

_D = timedelta(days=1)

#: name, event (past tense, with its subject), timed question, control question, details,
#: notes, fillers (same words, no detail)
TOPICS: tuple[tuple[str, str, str, str, list[str], list[str], list[str]], ...] = (
    ("hiking", "I went hiking with the team on {d}, and {n}",
     "Where did I go hiking with the team {w}?", "Which hike with the team was it where {n}?",
     ["the Ridge Loop above Lake Marrow", "the Eagle Crag trail", "the Old Quarry path",
      "Bracken Hill", "the Silver Falls circuit", "Hollow Pine ridge", "the Coastal Cliffs walk",
      "Mount Carrow", "the Blackwater gorge", "Fenwick Forest"],
     ["we spotted a family of marmots", "the fog never lifted", "Dana twisted her ankle near "
      "the top", "we got caught in a hailstorm", "the summit cafe was closed", "we found wild "
      "blueberries everywhere", "Tom flew his drone over the valley", "we took the wrong fork "
      "twice", "a ranger checked our permits", "we ate lunch beside a waterfall"],
     ["the team wants to plan another hike", "I bought new hiking boots", "checked the weather "
      "for a team hike", "my legs are sore from all the hiking", "looked at trail maps for the "
      "next team hike", "the team chat is arguing about where to hike next"]),
    ("trip", "I flew to {d} for {n}", "Which city was I visiting {w}?",
     "Which city did I fly to for {n}?",
     ["Lisbon", "Krakow", "Montreal", "Osaka", "Valencia", "Edinburgh", "Tallinn", "Porto",
      "Seattle", "Ljubljana"],
     ["my cousin's wedding", "a client workshop", "the climbing festival", "a long weekend "
      "with old friends", "the design conference", "my grandmother's birthday", "a job "
      "interview", "the jazz festival", "a hackathon", "the marathon"],
     ["I need to renew my passport before the next trip", "looked at cheap flights for a city "
      "break", "packed my carry-on far too early", "I keep collecting airline miles",
      "wondering where to travel next", "the airport train was delayed again"]),
    ("release", "we shipped {d} to production, and {n}", "What did we ship to production {w}?",
     "Which release to production was the one where {n}?",
     ["the billing migration", "the new search index", "the mobile onboarding flow",
      "the invoice export", "the dark mode toggle", "the payments retry queue",
      "the audit log viewer", "the SSO integration", "the CSV importer", "the rate limiter"],
     ["the rollback plan was never needed", "two customers reported a timezone bug",
      "latency dropped by a third", "we had to hotfix a null pointer", "the launch slipped by "
      "a day", "support tickets fell sharply", "the database CPU spiked at launch",
      "marketing announced it the same afternoon", "we forgot to update the changelog",
      "the feature flag stayed off for a week"],
     ["standup ran long because of the next release", "reviewed pull requests for the release",
      "the production deploy pipeline was slow", "we groomed the backlog for the sprint",
      "wrote tests before shipping to production", "the team debated what to ship next"]),
    ("baking", "I baked {d} for the first time, and {n}", "What did I bake {w}?",
     "What did I bake when {n}?",
     ["a sourdough loaf", "cinnamon rolls", "a lemon tart", "focaccia with rosemary",
      "a carrot cake", "soft pretzels", "a dark rye bread", "croissants", "a cheesecake",
      "bagels"],
     ["the smoke alarm went off", "the neighbours asked for the recipe", "it came out as dense "
      "as a brick", "I used my new stand mixer", "Sam ate half of it before dinner",
      "the dough never rose", "I burnt the bottom", "it won the office bake-off",
      "I forgot the salt", "I took it to the book club"],
     ["fed the starter and cleaned the kitchen", "bought more flour and yeast", "watched a "
      "video about laminated dough", "cleaned the oven after baking", "planned what to bake "
      "at the weekend", "the flat smells of fresh bread"]),
    ("vet", "I took Biscuit to the vet for {d}, and {n}", "Why did Biscuit go to the vet {w}?",
     "Why did Biscuit go to the vet the time {n}?",
     ["his annual vaccines", "a limp in his back leg", "an ear infection", "a dental cleaning",
      "a swallowed sock", "itchy skin", "a torn claw", "a weight check", "a bee sting on his "
      "nose", "an upset stomach"],
     ["the bill came to 180 euros", "he hid under the chair the whole time", "the vet "
      "prescribed drops twice a day", "we saw a new vet called Dr Okafor", "he needed a cone",
      "he weighed fourteen kilos", "the waiting room was full of puppies", "he was fine by the "
      "evening", "they took an x-ray", "the nurse gave him a treat"],
     ["Biscuit slept on the sofa all afternoon", "took Biscuit for a long walk in the park",
      "bought Biscuit a new chew toy", "Biscuit barked at the postman", "Biscuit needs his "
      "next check at the vet", "brushed Biscuit after a muddy walk"]),
    ("one-on-one", "I had a one-on-one with Maria about {d}, and {n}",
     "What did I discuss with Maria in my one-on-one {w}?",
     "Which one-on-one with Maria was the one where {n}?",
     ["my promotion case", "the team reorganisation", "moving to the platform team",
      "my conference budget", "working remotely from Spain", "the hiring plan", "my "
      "performance review", "mentoring the new interns", "the on-call rotation", "a salary "
      "adjustment"],
     ["she suggested I lead the next planning cycle", "we agreed to revisit it in a month",
      "she asked me to write a proposal", "it ran half an hour over", "she shared feedback "
      "from the director", "we talked while walking outside", "she approved it on the spot",
      "I took notes in the shared doc", "she was tired after a long offsite", "we ended early "
      "for a fire drill"],
     ["prepared notes for my next one-on-one with Maria", "Maria was out sick", "wrote my "
      "status update for Maria", "the team meeting with Maria was cancelled", "updated my "
      "goals document", "Maria forwarded the new org chart"]),
)
MISC = ["watched a documentary about octopuses", "called my sister", "the washing machine "
        "broke", "read two chapters of my novel", "tried the new coffee place on the corner",
        "paid the electricity bill", "cleaned out the garage", "the neighbours had a party"]
OPENERS = ["", "Note: ", "Also, ", "Honestly, ", "FYI: ", "Reminder: ", "By the way, ",
           "Small thing: ", "Random: "]
SUFFIXES = ["", " (from the group chat)", ", need to follow up", ", more on that later"]
#: relative phrase of a memory written after the event, and how many days after
MENTIONS = (("Yesterday", 1), ("Two days ago", 2), ("Last week", 7))
ABSOLUTE = ("month", "day", "last-week-of", "season", "year", "what-happened")
RELATIVE = ("yesterday", "three days ago", "last week", "last weekday", "last month",
            "two months ago")
SEASONS = {3: "spring", 4: "spring", 5: "spring", 6: "summer", 7: "summer", 8: "summer",
           9: "autumn", 10: "autumn", 11: "autumn"}
KINDS = ("absolute", "relative", "mention", "near", "none")


@dataclass
class Question:
    """A question, when it is asked (``now``), its kind and form, and its evidence ids.

    Example:
        >>> q = Question("What did I bake in May 2023?", datetime(2024, 1, 1, tzinfo=UTC),
        ...              "absolute", "month", ["h0-0042"])
        >>> q.kind in KINDS
        True
    """

    text: str
    now: datetime
    kind: str
    form: str
    evidence: list[str]


@dataclass
class History:
    """One user's dated memories (``store_many`` inputs with ids) and questions about them.

    Example:
        >>> h = make_history(0, seed=1, months=3)
        >>> len(h.records) > 40 and all(q.evidence for q in h.questions)
        True
    """

    namespace: str
    records: list[dict[str, Any]]
    questions: list[Question] = field(default_factory=list)


def _month(y: int, m: int) -> date:
    return date(y + (m - 1) // 12, (m - 1) % 12 + 1, 1)


def _at(d: date, hour: int, minute: int = 0) -> datetime:
    return datetime(d.year, d.month, d.day, hour, minute, tzinfo=UTC)


def _shift_month(d: date, n: int) -> date:
    first = _month(d.year, d.month + n)
    return first.replace(day=min(d.day, 28))


def make_history(index: int, *, seed: int = 0, months: int = 15, density: float = 0.55,
                 questions: tuple[int, ...] = (9, 9, 6, 6, 6)) -> History:
    """History ``index``: events, fillers and (absolute, relative, mention, none, near)
    questions."""
    rng = random.Random(f"time-questions-{seed}-{index}")
    start = date(2022, 2, 1) + timedelta(days=61 * index)
    end = start + timedelta(days=round(months * 30.44))
    days: dict[date, list[tuple[datetime, str, str]]] = defaultdict(list)  # (at, text, ev key)
    events: list[dict[str, Any]] = []
    for ti, (_, event, *_rest) in enumerate(TOPICS):
        details, notes = rng.sample(range(10), 10), rng.sample(range(10), 10)
        day = start + rng.randint(3, 30) * _D
        for k in range(10):
            lag = 0
            if rng.random() < 0.25:
                phrase, lag = rng.choice(MENTIONS)
            if day + lag * _D >= end:
                break
            text = event.format(d=TOPICS[ti][4][details[k]], n=TOPICS[ti][5][notes[k]])
            key = f"e{len(events)}"
            events.append({"topic": ti, "day": day, "note": TOPICS[ti][5][notes[k]],
                           "lag": lag, "key": key})
            if lag:
                days[day + lag * _D].append((_at(day + lag * _D, 9), f"{phrase} {text}.", key))
            else:
                days[day].append((_at(day, 18), text[0].upper() + text[1:] + ".", key))
            day += rng.randint(35, 70) * _D
    fillers = [o + s + x for o in OPENERS for s in [f for t in TOPICS for f in t[6]] + MISC
               for x in SUFFIXES]
    rng.shuffle(fillers)
    d = start
    while d < end:
        if days.get(d) or rng.random() < density:
            for i in range(rng.randint(1, 3)):
                text = fillers.pop()
                days[d].append((_at(d, 12, 10 * i), text[0].upper() + text[1:] + ".", ""))
        d += _D
    ns = f"history-{index}"
    records: list[dict[str, Any]] = []
    ids: dict[str, str] = {}
    day_ids: dict[date, list[str]] = defaultdict(list)
    for d in sorted(days):
        for at, text, key in sorted(days[d]):
            mid = f"h{index}-{len(records):04d}"
            ids[key or mid] = mid
            day_ids[d].append(mid)
            records.append({"id": mid, "content": text, "created_at": at,
                            "session_id": f"{ns}-{d.isoformat()}"})
    history = History(ns, records)
    history.questions = _questions(rng, events, ids, days, day_ids, _at(end, 12), questions)
    return history


def _window(form: str, d: date) -> tuple[date, date, str, int, str]:
    """The window a form names around event day ``d``: start, end, words, days from the event
    to ``now`` (0: absolute), and the form, which falls back to a plainer one where it does not
    fit the day (the last week of a month, a season but winter, a month ago mid-month)."""
    month = (_month(d.year, d.month), _month(d.year, d.month + 1))
    if form == "last-week-of" and (month[1] - d).days <= 7:
        return month[1] - 7 * _D, month[1], f"during the last week of {d:%B %Y}", 0, form
    if form == "season" and d.month in SEASONS:
        first = min(m for m, s in SEASONS.items() if s == SEASONS[d.month])
        return (_month(d.year, first), _month(d.year, first + 3),
                f"in {SEASONS[d.month]} {d.year}", 0, form)
    if form == "year":
        return date(d.year, 1, 1), date(d.year + 1, 1, 1), f"during {d.year}", 0, form
    if form in ("month", "last-week-of", "season"):
        return *month, f"in {d:%B %Y}", 0, "month"
    if form in ("last month", "two months ago") and 3 <= d.day <= 25:
        lag = _shift_month(d, 1 if form == "last month" else 2) - d
        return *month, form, lag.days, form
    if form == "last week":
        monday = d - d.weekday() * _D
        return monday, monday + 7 * _D, form, 7, form
    if form == "last weekday":
        return d, d + _D, f"last {d:%A}", 6, form
    if form == "three days ago":
        return d, d + _D, form, 3, form
    if form in ("yesterday", "last month", "two months ago"):
        return d, d + _D, "yesterday", 1, "yesterday"
    return d, d + _D, f"on {d.day} {d:%B %Y}", 0, "day"


def _questions(rng: random.Random, events: list[dict[str, Any]], ids: dict[str, str],
               days: dict[date, list[tuple[datetime, str, str]]],
               day_ids: dict[date, list[str]], end: datetime,
               counts: tuple[int, ...]) -> list[Question]:
    direct = [e for e in events if not e["lag"]]
    mentioned = [e for e in events if e["lag"]]
    rng.shuffle(direct)
    rng.shuffle(mentioned)
    n_abs, n_rel, n_men, n_none, n_near = counts
    plan = ([("absolute", ABSOLUTE[i % len(ABSOLUTE)], e) for i, e in enumerate(direct[:n_abs])]
            + [("relative", RELATIVE[i % len(RELATIVE)], e)
               for i, e in enumerate(direct[n_abs:n_abs + n_rel])]
            + [("mention", "day", e) for e in mentioned[:n_men]])
    out = []
    for kind, form, e in plan:
        d, topic = e["day"], TOPICS[e["topic"]]
        if form == "what-happened" and all(k in ("", e["key"]) for *_, k in days[d]):
            out.append(Question(f"What happened on {d.day} {d:%B %Y}?", end, kind, form,
                                day_ids[d]))
            continue
        start, stop, words, lag, form = _window(form, d)
        evidence = [ids[x["key"]] for x in events
                    if x["topic"] == e["topic"] and start <= x["day"] < stop]
        out.append(Question(topic[2].format(w=words), _at(d + lag * _D, 12) if lag else end,
                            kind, form, evidence))
    for e in rng.sample(events, min(n_none, len(events))):
        out.append(Question(TOPICS[e["topic"]][3].format(n=e["note"]), end, "none", "detail",
                            [ids[e["key"]]]))
    for e in direct:  # a month misremembered: the topic has none in it
        d, want = e["day"], "days off" if n_near % 2 else "weeks off"
        for first in (_month(d.year, d.month - 1), _month(d.year, d.month + 1)):
            span = (first, _month(first.year, first.month + 1))
            gap = (span[0] - d).days if d < span[0] else (d - span[1]).days + 1
            if (n_near > 0 and (gap <= 3 if want == "days off" else 14 <= gap <= 21)
                    and not any(x["topic"] == e["topic"] and span[0] <= x["day"] < span[1]
                                for x in events)):
                n_near -= 1
                out.append(Question(TOPICS[e["topic"]][2].format(w=f"in {first:%B %Y}"), end,
                                    "near", want, [ids[e["key"]]]))
                break
    return out


def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """Share of the evidence in the top 1/5/10, the reciprocal rank of the first, and the
    share missing from the whole list.

    Example:
        >>> score(["a", "b", "c"], ["b", "z"])
        {'r1': 0.0, 'r5': 0.5, 'r10': 0.5, 'rr': 0.5, 'missing': 0.5}
    """
    ev = set(evidence)
    out = {f"r{k}": len(ev & set(ranked[:k])) / len(ev) for k in (1, 5, 10)}
    first = next((i for i, r in enumerate(ranked) if r in ev), None)
    out["rr"] = 0.0 if first is None else 1.0 / (first + 1)
    out["missing"] = len(ev - set(ranked)) / len(ev)
    return out


def _weighted(weight: float) -> Any:
    from graphmem.config import GraphMemConfig, RetrievalConfig

    base = RetrievalConfig()
    return GraphMemConfig(retrieval=base.model_copy(
        update={"weights": base.weights.model_copy(update={"time": weight})}))


def run_time_bench(*, seed: int = 0, histories: int = 5, months: int = 15,
                   weights: Sequence[float] = (0.0, 0.5, 1.0, 2.0), limit: int = 50,
                   questions: tuple[int, ...] = (9, 9, 6, 6, 6), embedder: Any = None,
                   progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Store the histories once (real embeddings unless ``embedder``), then ask every question
    under each ``weights.time`` in ``weights`` (same store, same query vectors, no access
    recorded); metrics per weight and kind, per weight and form, and the questions whose
    evidence is missing from the top ``limit``."""
    from graphmem import GraphMemory
    from graphmem.bench.locomo import CachedEmbedder
    from graphmem.config import RetrievalWeights
    from graphmem.engine.embedding import make_embedder

    t_start = time.perf_counter()
    hist = [make_history(i, seed=seed, months=months, questions=questions)
            for i in range(histories)]
    asked = [(h.namespace, q) for h in hist for q in h.questions]
    emb = CachedEmbedder(embedder or make_embedder())
    per: dict[float, list[tuple[dict[str, float], float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with GraphMemory.open(data, embedder=emb) as mem:
            for h in hist:
                mem.store_many(h.records, namespace=h.namespace)
                progress(f"{h.namespace}: {len(h.records)} memories, "
                         f"{len(h.questions)} questions")
        emb.embed_queries([q.text for _, q in asked])  # every weight: the same cached vectors
        for w in weights:
            per[w] = []
            with GraphMemory.open(data, embedder=emb, config=_weighted(w)) as mem:
                for ns, q in asked[:5]:  # warm-up (first reads, the date parser), untimed
                    mem.retrieve(q.text, namespace=ns, record_access=False, now=q.now)
                for ns, q in asked:
                    t0 = time.perf_counter()
                    hits = mem.retrieve(q.text, namespace=ns, limit=limit,
                                        record_access=False, now=q.now)
                    seconds = time.perf_counter() - t0
                    lifted = sum(1 for h in hits[:10] if h.terms.get("time", 0.0) > 0)
                    per[w].append((score([h.id for h in hits], q.evidence), seconds, lifted))
            progress(f"weights.time {w}: done")
    base = per[weights[0]]
    rows: list[dict[str, Any]] = []
    forms: list[dict[str, Any]] = []
    misses: list[dict[str, Any]] = []
    groups = [("kind", k) for k in (*KINDS, "timed")]
    groups += [("form", f) for f in sorted({q.form for _, q in asked})]
    for w in weights:
        for by, name in groups:
            idx = [i for i, (_, q) in enumerate(asked) if getattr(q, by) == name
                   or (name == "timed" and q.kind in KINDS[:3])]
            if not idx:
                continue
            n = len(idx)
            row: dict[str, Any] = {"weight": w, by: name, "n": n}
            for m in ("r1", "r5", "r10", "missing"):
                row[m] = round(sum(per[w][i][0][m] for i in idx) / n, 4)
            row["mrr"] = round(sum(per[w][i][0]["rr"] for i in idx) / n, 4)
            row["better"] = sum(per[w][i][0]["rr"] > base[i][0]["rr"] for i in idx)
            row["worse"] = sum(per[w][i][0]["rr"] < base[i][0]["rr"] for i in idx)
            row["lifted@10"] = round(sum(per[w][i][2] for i in idx) / n, 2)
            row["ms"] = round(1000 * sum(per[w][i][1] for i in idx) / n, 2)
            (rows if by == "kind" else forms).append(row)
        misses += [{"weight": w, "question": q.text, "namespace": ns, "kind": q.kind,
                    "form": q.form, "now": q.now.isoformat(),
                    "missing": per[w][i][0]["missing"]}
                   for i, (ns, q) in enumerate(asked) if per[w][i][0]["missing"] > 0]
    return {"config": {"seed": seed, "histories": histories, "months": months,
                       "memories": sum(len(h.records) for h in hist), "questions": len(asked),
                       "weights": list(weights), "limit": limit,
                       "default_time_weight": RetrievalWeights().time,
                       "better_worse_against": weights[0]},
            "rows": rows, "forms": forms, "misses": misses,
            "seconds": round(time.perf_counter() - t_start, 1)}


def table(result: dict[str, Any]) -> str:
    """Markdown: per weight and kind, then R@10 / MRR per form and weight."""
    c = result["config"]
    lines = [f"{c['histories']} histories, {c['memories']} memories, {c['questions']} "
             f"questions (seed {c['seed']}); better/worse: first-evidence rank against "
             f"weight {c['better_worse_against']}", "",
             "| weights.time | kind | n | R@1 | R@5 | R@10 | MRR | missing@" + str(c["limit"])
             + " | better | worse | lifted@10 | ms/query |", "|" + "---:|" * 12]
    for r in result["rows"]:
        lines.append(f"| {r['weight']} | {r['kind']} | {r['n']} | {r['r1']:.3f} | "
                     f"{r['r5']:.3f} | {r['r10']:.3f} | {r['mrr']:.3f} | {r['missing']:.3f} | "
                     f"{r['better']} | {r['worse']} | {r['lifted@10']} | {r['ms']} |")
    names = list(dict.fromkeys(r["form"] for r in result["forms"]))
    lines += ["", "R@10 / MRR per form", "",
              "| weights.time | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    for w in c["weights"]:
        cells = {r["form"]: f"{r['r10']:.2f} / {r['mrr']:.2f} ({r['n']})"
                 for r in result["forms"] if r["weight"] == w}
        lines.append(f"| {w} | " + " | ".join(cells.get(n, "-") for n in names) + " |")
    return "\n".join(lines)
