"""Event anchors: "before/after/since/until <event>" where the event is not a date.

The analyser cannot know when "Alice joined Google"; it returns the event text
and the side, and the recall pipeline looks the event up in the bank and calls
:func:`tempr.temporal.window_from_anchor` with the date it found.
"""

from __future__ import annotations

import re

from tempr.core.types import EventAnchor

_KEYWORD = re.compile(
    r"(?:^|(?<=[\s,(]))(?:(?:right|just|shortly|soon|long|even|immediately|not\s+long|ever)\s+)?"
    r"(?P<kw>before|after|since|until|till|prior\s+to|up\s+until)\s+(?=\S)",
)
_SIDE = {
    "before": "before",
    "prior to": "before",
    "until": "before",
    "till": "before",
    "up until": "before",
    "after": "after",
    "since": "after",
}
_END = re.compile(
    r"[?.!;,:](?=\s|$)|\s+(?:and|or|but)\s+(?:(?:before|after|since|until|what|who|when|where|why|how|which|did|do|does|was"
    r"|were|is|are|has|have|had)\b)|\s+(?=(?:before|after|since|until|till)\s)"
)
_REJECT_FIRST = frozenset(
    """that this it then now me you him her them us all long lunch dinner breakfast brunch noon midnight work school
    class hours bed dark sunset sunrise which what when where who whom how why ever and or so as if that's
    everything anything something nothing everyone anyone someone these those there here tomorrow yesterday today
    tonight before after since until till prior""".split()
)
_CAUSAL_SINCE = re.compile(
    r"^(?:\S+\s+){0,3}?(?:is|are|am|isn't|aren't|can|can't|cannot|will|won't|do|does|don't|doesn't|must|should)\b"
)
_CONTRACTION = re.compile(r"^\S+'(?:s|re|m)\b")
_MAX_WORDS = 12
_MAX_ANCHORS = 4


def find_anchors(folded: str, original: str, blocked: list[tuple[int, int]]) -> list[tuple[int, int, EventAnchor]]:
    """Event anchors with their spans; a keyword inside a ``blocked`` span (an
    understood date phrase such as "since January") is not an anchor."""
    found = []
    for m in _KEYWORD.finditer(folded):
        if any(start <= m.start("kw") < end for start, end in blocked):
            continue
        kw = " ".join(m["kw"].split())
        rest_start = m.end()
        end_m = _END.search(folded, rest_start)
        end = end_m.start() if end_m else len(folded)
        event_folded = folded[rest_start:end].strip()
        words = event_folded.split()
        if not words or len(words) > _MAX_WORDS or words[0] in _REJECT_FIRST or words[0][0].isdigit():
            continue
        if not any(ch.isalpha() for ch in event_folded):
            continue
        if kw == "since" and (_CAUSAL_SINCE.match(event_folded) or _CONTRACTION.match(event_folded)):
            continue  # "since Alice is away ...": causal, not temporal
        event = original[rest_start:end].strip()
        source = original[m.start("kw") : end].strip()
        found.append((m.start(), end, EventAnchor(_SIDE[kw], event, source)))
        if len(found) == _MAX_ANCHORS:
            break
    return found
