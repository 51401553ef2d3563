"""English word tables and the regex fragments built from them."""

from __future__ import annotations

from collections.abc import Iterable

from tempr.temporal._text import EN_NUMBERS


def alt(words: Iterable[object]) -> str:
    """A regex alternation, longest first, spaces matching any whitespace."""
    items = sorted({str(w) for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(w.replace(".", r"\.").replace(" ", r"\s+") for w in items) + ")"


MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
MONTH_ABBR = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
ALL_MONTHS = {**MONTHS, **MONTH_ABBR}
# Month names that are also common words or first names: they need context
# ("in May", "May 2023", "last May", "May 5") before they count.
AMBIGUOUS_MONTHS = frozenset({"march", "may", "june", "april", "august"}) | frozenset(MONTH_ABBR)

WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}

SEASONS = {"spring": "spring", "summer": "summer", "autumn": "autumn", "fall": "autumn", "winter": "winter"}

UNITS = {
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "fortnight": "fortnight",
    "fortnights": "fortnight",
    "month": "month",
    "months": "month",
    "quarter": "quarter",
    "quarters": "quarter",
    "year": "year",
    "years": "year",
    "decade": "decade",
    "decades": "decade",
}

FUZZY = {
    "a couple of": (1, 3),
    "a couple": (1, 3),
    "couple of": (1, 3),
    "a few": (2, 5),
    "few": (2, 5),
    "several": (3, 7),
    "a handful of": (3, 7),
}
FUZZY_ROLLING = {"couple of": 3, "a couple of": 3, "few": 5, "a few": 5, "several": 7}

DECADE_WORDS = {
    "twenties": 2,
    "thirties": 3,
    "forties": 4,
    "fifties": 5,
    "sixties": 6,
    "seventies": 7,
    "eighties": 8,
    "nineties": 9,
}

_ORD_WORDS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
DAY_ORDINALS = {w: i for i, w in enumerate(_ORD_WORDS, 1)}
DAY_ORDINALS.update({f"twenty-{w}": 20 + i for i, w in enumerate(_ORD_WORDS[:9], 1)})
DAY_ORDINALS.update({"thirtieth": 30, "thirty-first": 31})

ORDINAL_NUM = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "last": -1,
    "final": -1,
}

# Prepositions and determiners that make a bare year a year ("in 2023", "since 2019"),
# in every supported Latin/Cyrillic language.
YEAR_PREPOSITIONS = frozenset(
    """in during of since from until till to through thru before after by around about circa
    throughout for and or the year back early mid late pre post between than vs versus
    en el del de desde hasta durante ano antes despues entre y a o
    dans depuis jusqu'en jusqu'a avant apres annee an et au du
    im jahr seit bis ab vor nach zwischen und von vom
    nel nell'anno dal al fino tra fra da anno prima dopo e
    em no ate depois
    в с до после году года между по от""".split()
)

# Words that, right after a number, make it a count ("2000 users", "1999 people").
COUNT_NOUNS = frozenset(
    """people persons men women children kids users customers employees members items things
    times rows lines files records words pages steps points votes dollars euros pounds yen
    miles km meters metres feet ft kg lbs pounds calories ms seconds secs minutes mins hours hrs
    tokens bytes kb mb gb tb px units pieces copies tickets emails messages requests errors
    bugs tests issues commits stars views likes followers downloads installs ms""".split()
)
NOT_PLURAL = frozenset("was has is this its us plus yes as does goes his hers ours yours whereas".split())

PERIOD_WORDS = alt(["this", "last", "next", "past", "previous", "coming", "upcoming", "current"])

NUM_WORDS = alt(k for k in EN_NUMBERS if k not in ("a", "an"))
NUMBER = rf"(?:\d{{1,3}}|{NUM_WORDS}|an?)"

MONTH_CUES = frozenset(ALL_MONTHS)
SEASON_CUES = frozenset(SEASONS)
WEEKDAY_CUES = frozenset(WEEKDAYS)
UNIT_CUES = frozenset(UNITS)
