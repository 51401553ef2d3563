"""Text preparation: normalisation that keeps character offsets, and masking of
things that contain digits but are not dates (URLs, versions, ports, phones...).

Masked characters become ``\\x00`` so offsets stay valid and no rule can match
across or inside them.
"""

from __future__ import annotations

import re
import unicodedata

MASK = "\x00"


def _strip_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for cp in range(0xC0, 0x250):
        ch = chr(cp)
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if len(base) == 1 and base != ch:
            table[cp] = base
    for ch in "\u2018\u2019\u02bc\u00b4`":
        table[ord(ch)] = "'"
    for ch in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212":
        table[ord(ch)] = "-"
    return table


_STRIP = _strip_table()


def fold(text: str) -> str:
    """Lower-case and strip Latin accents (Cyrillic, CJK and Hangul untouched)."""
    return text.lower().translate(_STRIP)


def strip_accents(text: str) -> str:
    """Strip Latin accents only (for regex templates, whose escapes are case-sensitive)."""
    return text.translate(_STRIP)


def prepare(query: str) -> tuple[str, str]:
    """Return ``(original, folded)`` of equal length: NFKC text and its folded form."""
    original = unicodedata.normalize("NFKC", query)
    folded = fold(original)
    if len(folded) != len(original):  # rare: a char whose lower case is longer (e.g. U+0130)
        folded = "".join(c if len(c.lower()) != 1 else fold(c) for c in original)
    return original, _HYPHEN_NUMBER.sub(" ", folded)


_HYPHEN_NUMBER = re.compile(r"(?<=[a-z])-(?=\d)")  # "mid-2022" -> "mid 2022", same length


def mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = MASK * (end - start)
    return "".join(chars)


# --- guards: digit-bearing things that are not dates ---------------------------------

_ALLOWED_TOKEN = re.compile(
    r"(?:\d{4}-)?q[1-4](?:-\d{4})?|h[12]|\d{1,2}(?:st|nd|rd|th)|\d{2}s|\d{4}s"
    r"|(?:\d{4}-)?w\d{1,2}|\d{4}-\d{1,2}|\d{4}-\d{1,2}-\d{1,2}"
)

_CONTAINERS = re.compile(
    r"""
      (?:https?://|ftp://|www\.)\S+                                   # URLs
    | (?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+                         # e-mail
    | (?<![\w.])[a-z][\w-]*(?:\.[a-z][\w-]*)+/\S*                    # bare domain/path
    | \b[a-z][\w-]*\.(?:com|org|net|io|ai|dev|app|co|info|biz|de|fr|es|it|pt|ru|uk|cn|jp|kr|eu)\b  # domains
    | (?<![\w/])/(?=[\w.-]*[a-z_])[\w.-]+(?:/[\w.-]+)+                  # file paths
    | (?<![\w-])(?=[\w-]*\d)[\w-]+\.[a-z][a-z0-9]{1,4}\b                # file names with digits
    """,
    re.VERBOSE,
)

_NUMBERS = re.compile(
    r"""
      \b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b                            # IPv4
    | \bv?\d+(?:\.\d+){1,3}[a-z]*\b                                   # versions, decimals
    | :\d{2,5}\b                                                      # :port
    | \b(?:ports?|pin|ext|extension|room|page|line|step|code|error|status|issue|ticket|pr|build
         |version|release|model|flight|route|order|invoice|account|zip|apt|suite|chapter|figure
         |table|item|level|no|number|id|top|rank|row|column|col|rule|test|case|bug|job|run
         |episode|season|vol|volume|part|track|gate|platform|bus|train|highway|interstate)
         \.?\s*\#?\d[\d,]*\b                                         # labelled numbers
    | \#\d+ | \b0x[0-9a-f]+\b                                         # #123, hex
    | \+?\(?\d{1,4}\)?(?:[\s.-]\d{2,4}){2,4}(?![\d-])                # phone numbers
    | \b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\b\.?)?                 # clock times
    | \b\d{1,2}\s*(?:[ap]\.?m\b\.?|o'clock)                           # 3pm
    | [$€£¥₹]\s*\d[\d,.]*[kmb]?\b | \b\d[\d,.]*\s*(?:%|percent\b)     # money, percent
    | \b\d{1,3}(?:,\d{3})+\b                                          # 2,023
    """,
    re.VERBOSE,
)

_IDENT = re.compile(r"(?<![a-z0-9_-])[a-z0-9_-]*(?:[a-z_]\d|\d[a-z_])[a-z0-9_-]*(?![a-z0-9_-])")


def container_spans(text: str) -> list[tuple[int, int]]:
    """URLs, e-mail addresses, paths and file names: nothing inside them is a date."""
    return [m.span() for m in _CONTAINERS.finditer(text)]


def number_spans(text: str) -> list[tuple[int, int]]:
    """Digit-bearing tokens that are not dates: versions, ports, phones, times, ids..."""
    spans = [m.span() for m in _NUMBERS.finditer(text)]
    for m in _IDENT.finditer(text):
        if not _ALLOWED_TOKEN.fullmatch(m.group().strip("-_")):
            spans.append(m.span())
    return spans


# --- numbers ---------------------------------------------------------------------------

EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
}

ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
    "final": -1,
}

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "兩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
CN_NUM = r"[0-9零〇一二两兩三四五六七八九十百]+"


def cn_number(text: str) -> int | None:
    """Arabic or Chinese numerals up to 999 ("3", "十二", "二十五", "两")."""
    if text.isdigit():
        return int(text)
    total, current = 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


def number(text: str, words: dict[str, int]) -> int | None:
    text = text.strip()
    if text.isdigit():
        return int(text)
    return words.get(text)
