"""The words the summariser judges text by, and its tokenizer: scikit-learn's English stop
words (``_ENGLISH``, a copy, so importing the summariser does not import scikit-learn), small
talk that is not chit-chat (``FILLER_WORDS``), the commonest verbs (``COMMON_VERBS``), what
never heads a key phrase, ``PHRASE_STOP`` (none of these is a key phrase word or an
informative word), the words that open or precede a noun phrase, number words, weekdays and
month names; ``_tokens`` splits a text into words, numbers and punctuation."""

from __future__ import annotations

import re

from graphmem.rules.text import CHIT_CHAT_WORDS, MONTHS, STOP_WORDS

#: scikit-learn's English list (a copy: "since", "along", "ever", "something", "others" ...)
_ENGLISH = frozenset(
    """a about above across after afterwards again against all almost alone along already
    also although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every everyone
    everything everywhere except few fifteen fifty fill find fire first five for former
    formerly forty found four from front full further get give go had has hasnt have he hence
    her here hereafter hereby herein hereupon hers herself him himself his how however hundred
    i ie if in inc indeed interest into is it its itself keep last latter latterly least less
    ltd made many may me meanwhile might mill mine more moreover most mostly move much must my
    myself name namely neither never nevertheless next nine no nobody none noone nor not
    nothing now nowhere of off often on once one only onto or other others otherwise our ours
    ourselves out over own part per perhaps please put rather re same see seem seemed seeming
    seems serious several she should show side since sincere six sixty so some somehow someone
    something sometime sometimes somewhere still such system take ten than that the their them
    themselves then thence there thereafter thereby therefore therein thereupon these they
    thick thin third this those though three through throughout thru thus to together too top
    toward towards twelve twenty two un under until up upon us very via was we well were what
    whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
    whether which while whither who whoever whole whom whose why will with within without
    would yet you your yours yourself yourselves""".split())

#: small talk that is not in ``CHIT_CHAT_WORDS``: fillers, time-of-week words, feelings about
#: the conversation itself ("busy week", "had a blast", "so stoked")
FILLER_WORDS = frozenset(
    """busy week weeks day days time times today tonight yesterday tomorrow morning evening
    night weekend weekends lot lots bit thing things stuff way ways kind sort gonna wanna
    gotta kinda sorta ya yall guys guy folks pretty stoked excited excite proud lucky blast
    vibe vibes cute sweet feel feels felt glad mean means meant bunch tons ton whoa aw aww
    awww yay woo yup sorry hope hoping wish wishes hug hugs xoxo dear buddy pal friend
    anytime chat chatting talk talking catch catching update updates news btw gosh
    wonder wondering guess maybe tho though mind pic pics photo photos picture pictures
    ago ones people moment moments everyone someone course fact general touch matter""".split())

#: the commonest verbs in their forms: after a noun they end a phrase ("painting looks like")
COMMON_VERBS = frozenset(
    """like likes liked liking look looks looked looking make makes made making help helps
    helped helping take takes took taken taking want wants wanted wanting need needs needed
    think thinks thought thinking know knows knew known say says said saying tell tells told
    try tries tried trying come comes came coming give gives gave given keep keeps kept let
    lets use uses used using start starts started starting finish finished show shows showed
    shown bring brings brought seem seems seemed get gets got getting go goes went gone going
    do does did done doing have has had having put puts set sets turn turns turned call
    called ask asks asked work worked working play played playing run ran leave left feel
    mean find found become became remind reminds reminded check checked love loves loved
    enjoy enjoyed enjoying hear heard see saw seen seeing watch watched happen happens
    happened forward broke broken fell fallen grew grown knew wrote written drew drawn ate
    eaten drove driven flew flown rode ridden spoke spoken threw thrown wore worn won lost
    sold paid sent spent built bought caught taught fought held met twice thrice""".split())

#: adjectives seen after "a" / "the" that never head a key phrase on their own
_NOT_HEAD = frozenset(
    """new old big small little huge tiny best better worst worse bad real true different
    special favorite favourite entire certain main second perfect hard tough long short high
    low young full free open close sad important beautiful wonderful awesome amazing
    incredible quick slow easy difficult ready able possible sure whole such safe loving
    caring inspiring exciting interesting rewarding relaxing calming touching""".split())

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: not a key phrase word, not an informative word (dates are facts, not topics)
PHRASE_STOP = STOP_WORDS | _ENGLISH | CHIT_CHAT_WORDS | FILLER_WORDS | COMMON_VERBS \
    | frozenset(MONTHS) | frozenset(_WEEKDAYS)

_DETERMINERS = frozenset(
    """a an the my your his her our their this these those its some any each every no another
    several many few two three four five six seven eight nine ten twelve""".split())
#: after these a verb or an adjective comes, not a noun: "I lost", "to go", "was tough"
_PREDICATE_BEFORE = frozenset(
    """i we you they he she it i'm we're you're they're he's she's it's that's to will would
    can could should must might shall 'll don't didn't doesn't won't can't isn't wasn't
    aren't weren't is was are were be been am so very really too pretty quite feel felt
    feels seem seems seemed look looks looked get got getting""".split())
#: a text with none of these, nor determiners or prepositions, is a note, not a sentence
_PERSONAL = frozenset("""i i'm i've i'd i'll me my we we're we've our us you you're your he
    he's his him she she's her they they're their them it it's its that's""".split())
#: after these a noun (or a gerund) comes too: "help folks with adoption."
_PREPOSITIONS = frozenset("of for with about in on at from into by through".split())
#: a word after which these come is more likely a verb than a noun ("builds the world")
_OBJECT_STARTERS = frozenset(
    "the a an my your his her our their me us him them it its this that these those to up "
    "out you myself yourself himself herself itself ourselves yourselves themselves".split())
_NUMBER_WORDS = ("two three four five six seven eight nine ten eleven twelve twenty thirty "
                 "forty fifty hundred").split()
_MONTH_NAMES = "|".join(m.capitalize() for m in MONTHS)
_TOKEN = re.compile(r"(?P<w>[^\W\d_](?:[^\W\d_]|['\u2019-](?=[^\W\d_]))*)"
                    r"|(?P<n>[$€£]?\d+(?:[.,:]\d+)*%?(?:st|nd|rd|th|k|K)?)"
                    r"|(?P<p>[^\s\w])")


def _base(word: str) -> str:
    """Lowercase, straight apostrophes, no possessive "'s"."""
    w = word.lower().replace("\u2019", "'")
    return w[:-2] if w.endswith("'s") else w


def _stop(word: str) -> bool:
    w = word.lower().replace("\u2019", "'")
    return w in PHRASE_STOP or _base(w) in PHRASE_STOP or ("'" in w and not w.endswith("'s"))


def _participle(word: str) -> bool:
    """"named", "called", "signed": a verb form, never inside a noun phrase ("a cat named
    Bailey" is no phrase); short words ("red", "bed") are not."""
    return len(word) > 4 and word.lower().endswith("ed")


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, token): kind w (word), n (number), p (punctuation)."""
    return [(m.lastgroup or "p", m.group()) for m in _TOKEN.finditer(text)]
