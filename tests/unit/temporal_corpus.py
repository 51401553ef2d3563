"""The temporal analyser's corpus: (query, reference, expected windows or none).

English cases live here; multilingual and no-window cases in
``temporal_corpus_intl.py``. ``all_cases()`` is the union, used by the test and
by ``bench/bench_temporal.py`` (see ``all_cases``).

An expected window ``W(start, end, granularity)`` means start = ``start``
00:00:00 UTC and end = ``end`` 23:59:59.999999 UTC (both inclusive); open
windows also give the side and the anchor day (00:00 UTC). ``A(side, event)``
is an event anchor. An empty expectation means: no window and no anchor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

REF = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)  # a Saturday; ISO week 10-16 June; Q2; northern summer


def ref(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


@dataclass(frozen=True)
class W:
    start: str
    end: str
    granularity: str
    open_side: str | None = None
    anchor: str | None = None


@dataclass(frozen=True)
class A:
    side: str
    event: str


@dataclass(frozen=True)
class Case:
    category: str
    query: str
    expect: tuple[W | A, ...]
    ref: datetime = REF
    hemisphere: str = "north"
    languages: tuple[str, ...] | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)


CASES: list[Case] = []


def add(category: str, query: str, *expect: W | A, ref: datetime = REF, hemisphere: str = "north") -> None:
    CASES.append(Case(category, query, tuple(expect), ref, hemisphere))


# --- calendar units ---------------------------------------------------------------------
C = "calendar"
add(C, "What did Alice do in 2023?", W("2023-01-01", "2023-12-31", "year"))
add(C, "what happened during 2021", W("2021-01-01", "2021-12-31", "year"))
add(C, "Tell me about 2019", W("2019-01-01", "2019-12-31", "year"))
add(C, "2022 was a busy year for Bob", W("2022-01-01", "2022-12-31", "year"))
add(C, "the year 2015", W("2015-01-01", "2015-12-31", "year"))
add(C, "What did Carol do in May 2023?", W("2023-05-01", "2023-05-31", "month"))
add(C, "Where was Dave in May?", W("2024-05-01", "2024-05-31", "month"))
add(C, "What happened in May?", W("2023-05-01", "2023-05-31", "month"), ref=ref("2024-03-10"))
add(C, "What will we do in May?", W("2024-05-01", "2024-05-31", "month"), ref=ref("2024-03-10"))
add(C, "what happened in March", W("2024-03-01", "2024-03-31", "month"))
add(C, "What did we ship in June?", W("2024-06-01", "2024-06-30", "month"))
add(C, "last May", W("2024-05-01", "2024-05-31", "month"))
add(C, "What did I do last May?", W("2023-05-01", "2023-05-31", "month"), ref=ref("2024-05-20"))
add(C, "next March", W("2025-03-01", "2025-03-31", "month"))
add(C, "this December", W("2024-12-01", "2024-12-31", "month"))
add(C, "in September", W("2023-09-01", "2023-09-30", "month"))
add(C, "December 2022", W("2022-12-01", "2022-12-31", "month"))
add(C, "notes from Sept 2021", W("2021-09-01", "2021-09-30", "month"))
add(C, "May of last year", W("2023-05-01", "2023-05-31", "month"))
add(C, "last year in March", W("2023-03-01", "2023-03-31", "month"))
add(C, "what happened in 2023-05", W("2023-05-01", "2023-05-31", "month"))
add(C, "What happened on March 5, 2023?", W("2023-03-05", "2023-03-05", "day"))
add(C, "What did Bob say on 2023-06-15?", W("2023-06-15", "2023-06-15", "day"))
add(C, "on 5 March 2023", W("2023-03-05", "2023-03-05", "day"))
add(C, "the 5th of March 2023", W("2023-03-05", "2023-03-05", "day"))
add(C, "on March 5th", W("2024-03-05", "2024-03-05", "day"))
add(C, "on July 4", W("2023-07-04", "2023-07-04", "day"))
add(C, "the meeting on 12/25/2023", W("2023-12-25", "2023-12-25", "day"))
add(C, "on 25.12.2023", W("2023-12-25", "2023-12-25", "day"))
add(C, "on 03/04/2023", W("2023-03-04", "2023-03-04", "day"))
add(C, "on Dec. 3", W("2023-12-03", "2023-12-03", "day"))
add(C, "the fifth of May", W("2024-05-05", "2024-05-05", "day"))
add(C, "on the first of June", W("2024-06-01", "2024-06-01", "day"))
add(C, "the 3rd of last month", W("2024-05-03", "2024-05-03", "day"))
add(C, "what happened on Tuesday the 4th", W("2024-06-04", "2024-06-04", "day"))
add(C, "March 3-10, 2023", W("2023-03-03", "2023-03-10", "span"))
add(C, "Q3 2023", W("2023-07-01", "2023-09-30", "quarter"))
add(C, "the third quarter of 2022", W("2022-07-01", "2022-09-30", "quarter"))
add(C, "results for Q1", W("2024-01-01", "2024-03-31", "quarter"))
add(C, "Q4 numbers", W("2023-10-01", "2023-12-31", "quarter"))
add(C, "2023 Q2", W("2023-04-01", "2023-06-30", "quarter"))
add(C, "the first quarter of last year", W("2023-01-01", "2023-03-31", "quarter"))
add(C, "H1 2023", W("2023-01-01", "2023-06-30", "half"))
add(C, "the first half of 2022", W("2022-01-01", "2022-06-30", "half"))
add(C, "the second half of last year", W("2023-07-01", "2023-12-31", "half"))
add(C, "the 90s", W("1990-01-01", "1999-12-31", "decade"))
add(C, "music from the 1980s", W("1980-01-01", "1989-12-31", "decade"))
add(C, "the nineties", W("1990-01-01", "1999-12-31", "decade"))
add(C, "the early 2000s", W("2000-01-01", "2003-12-31", "span"))
add(C, "the late 90s", W("1997-01-01", "1999-12-31", "span"))
add(C, "the 20th century", W("1900-01-01", "1999-12-31", "century"))
add(C, "early 2022", W("2022-01-01", "2022-04-30", "span"))
add(C, "mid-2021", W("2021-05-01", "2021-08-31", "span"))
add(C, "late 2020", W("2020-09-01", "2020-12-31", "span"))
add(C, "the end of 2019", W("2019-09-01", "2019-12-31", "span"))
add(C, "the beginning of last year", W("2023-01-01", "2023-04-30", "span"))
add(C, "early May", W("2024-05-01", "2024-05-10", "span"))
add(C, "late March 2023", W("2023-03-21", "2023-03-31", "span"))
add(C, "mid-June", W("2024-06-11", "2024-06-20", "span"))
add(C, "What did Alice say about Python last spring?", W("2024-03-01", "2024-05-31", "season"))
add(C, "summer 2023", W("2023-06-01", "2023-08-31", "season"))
add(C, "last summer", W("2023-06-01", "2023-08-31", "season"))
add(C, "this summer", W("2024-06-01", "2024-08-31", "season"))
add(C, "last winter", W("2023-12-01", "2024-02-29", "season"))
add(C, "what did we do in the fall", W("2023-09-01", "2023-11-30", "season"))
add(C, "autumn 2022", W("2022-09-01", "2022-11-30", "season"))
add(C, "during the winter of 2021", W("2021-12-01", "2022-02-28", "season"))
add(C, "the summer of '69", W("1969-06-01", "1969-08-31", "season"))
add(C, "last spring", W("2023-03-01", "2023-05-31", "season"), ref=ref("2024-04-10"))
add(C, "last summer", W("2023-12-01", "2024-02-29", "season"), hemisphere="south")
add(C, "this winter", W("2024-06-01", "2024-08-31", "season"), hemisphere="south")
add(C, "the week of March 5, 2023", W("2023-02-27", "2023-03-05", "week"))
add(C, "week 12 of 2023", W("2023-03-20", "2023-03-26", "week"))
add(C, "2023-W01", W("2023-01-02", "2023-01-08", "week"))
add(C, "the first week of January", W("2024-01-01", "2024-01-07", "week"))
add(C, "the last week of May 2023", W("2023-05-25", "2023-05-31", "week"))
add(C, "on Friday", W("2024-06-14", "2024-06-14", "day"))
add(C, "last Tuesday", W("2024-06-11", "2024-06-11", "day"))
add(C, "next Monday", W("2024-06-17", "2024-06-17", "day"))
add(C, "this Wednesday", W("2024-06-12", "2024-06-12", "day"))
add(C, "in '19", W("2019-01-01", "2019-12-31", "year"))

# --- relative spans -------------------------------------------------------------------------
R = "relative"
add(R, "What did I do yesterday?", W("2024-06-14", "2024-06-14", "day"))
add(R, "What did I do today?", W("2024-06-15", "2024-06-15", "day"))
add(R, "the day before yesterday", W("2024-06-13", "2024-06-13", "day"))
add(R, "what happened last night", W("2024-06-14", "2024-06-14", "day"))
add(R, "this morning", W("2024-06-15", "2024-06-15", "day"))
add(R, "what's planned for tomorrow", W("2024-06-16", "2024-06-16", "day"))
add(R, "3 days ago", W("2024-06-12", "2024-06-12", "day"))
add(R, "two weeks ago", W("2024-05-27", "2024-06-02", "week"))
add(R, "What did I do 3 weeks ago?", W("2024-05-20", "2024-05-26", "week"))
add(R, "2 months ago", W("2024-04-01", "2024-04-30", "month"))
add(R, "a month ago", W("2024-05-01", "2024-05-31", "month"))
add(R, "5 years ago", W("2019-01-01", "2019-12-31", "year"))
add(R, "a year ago", W("2023-01-01", "2023-12-31", "year"))
add(R, "a decade ago", W("2010-01-01", "2019-12-31", "decade"))
add(R, "a few days ago", W("2024-06-10", "2024-06-13", "span"))
add(R, "a couple of weeks ago", W("2024-05-20", "2024-06-09", "span"))
add(R, "a few months ago", W("2024-01-01", "2024-04-30", "span"))
add(R, "several years ago", W("2017-01-01", "2021-12-31", "span"))
add(R, "a fortnight ago", W("2024-05-27", "2024-06-02", "week"))
add(R, "half a year ago", W("2023-12-01", "2023-12-31", "month"))
add(R, "an hour ago", W("2024-06-15", "2024-06-15", "day"))
add(R, "in the last 10 days", W("2024-06-05", "2024-06-15", "span"))
add(R, "the past 3 months", W("2024-03-15", "2024-06-15", "span"))
add(R, "over the past week", W("2024-06-08", "2024-06-15", "span"))
add(R, "in the last year", W("2023-06-15", "2024-06-15", "span"))
add(R, "the past few weeks", W("2024-05-11", "2024-06-15", "span"))
add(R, "over the past couple of years", W("2021-06-15", "2024-06-15", "span"))
add(R, "in recent weeks", W("2024-05-11", "2024-06-15", "span"))
add(R, "What has Alice been doing recently?", W("2024-05-16", "2024-06-15", "span"))
add(R, "what has Bob been up to lately", W("2024-05-16", "2024-06-15", "span"))
add(R, "last week", W("2024-06-03", "2024-06-09", "week"))
add(R, "this week", W("2024-06-10", "2024-06-16", "week"))
add(R, "next week", W("2024-06-17", "2024-06-23", "week"))
add(R, "What did Bob work on last month?", W("2024-05-01", "2024-05-31", "month"))
add(R, "this month", W("2024-06-01", "2024-06-30", "month"))
add(R, "next month", W("2024-07-01", "2024-07-31", "month"))
add(R, "What did Bob work on last year?", W("2023-01-01", "2023-12-31", "year"))
add(R, "this year", W("2024-01-01", "2024-12-31", "year"))
add(R, "next year", W("2025-01-01", "2025-12-31", "year"))
add(R, "last quarter", W("2024-01-01", "2024-03-31", "quarter"))
add(R, "this quarter", W("2024-04-01", "2024-06-30", "quarter"))
add(R, "next quarter", W("2024-07-01", "2024-09-30", "quarter"))
add(R, "last decade", W("2010-01-01", "2019-12-31", "decade"))
add(R, "last weekend", W("2024-06-08", "2024-06-09", "weekend"))
add(R, "this weekend", W("2024-06-15", "2024-06-16", "weekend"))
add(R, "this past weekend", W("2024-06-08", "2024-06-09", "weekend"))
add(R, "what did we do over the weekend", W("2024-06-08", "2024-06-09", "weekend"), ref=ref("2024-06-12"))
add(R, "earlier this month", W("2024-06-01", "2024-06-15", "span"))
add(R, "so far this year", W("2024-01-01", "2024-06-15", "span"))
add(R, "year to date", W("2024-01-01", "2024-06-15", "span"))
add(R, "later this month", W("2024-06-16", "2024-06-30", "span"))
add(R, "I saw Carol the other day", W("2024-06-08", "2024-06-14", "span"))
add(R, "in 2 weeks", W("2024-06-24", "2024-06-30", "week"))
add(R, "3 days from now", W("2024-06-18", "2024-06-18", "day"))
add(R, "Friday of last week", W("2024-06-07", "2024-06-07", "day"))
add(R, "the Monday before last", W("2024-06-03", "2024-06-03", "day"))
add(R, "the end of last year", W("2023-09-01", "2023-12-31", "span"))
add(R, "early this month", W("2024-06-01", "2024-06-10", "span"))
add(R, "yesterday", W("2023-12-31", "2023-12-31", "day"), ref=ref("2024-01-01"))
add(R, "last month", W("2023-12-01", "2023-12-31", "month"), ref=ref("2024-01-10"))
add(R, "last week", W("2023-12-25", "2023-12-31", "week"), ref=ref("2024-01-03"))

# --- holidays -------------------------------------------------------------------------------
H = "holiday"
add(H, "Christmas 2022", W("2022-12-25", "2022-12-25", "day"))
add(H, "last Christmas", W("2023-12-25", "2023-12-25", "day"))
add(H, "What did we do at Christmas?", W("2023-12-25", "2023-12-25", "day"))
add(H, "next Christmas", W("2024-12-25", "2024-12-25", "day"))
add(H, "this Christmas", W("2024-12-25", "2024-12-25", "day"))
add(H, "Christmas Eve", W("2023-12-24", "2023-12-24", "day"))
add(H, "Christmas of last year", W("2023-12-25", "2023-12-25", "day"))
add(H, "in 2021 at Christmas", W("2021-12-25", "2021-12-25", "day"))
add(H, "New Year's Eve 2023", W("2023-12-31", "2023-12-31", "day"))
add(H, "on New Year's Day", W("2024-01-01", "2024-01-01", "day"))
add(H, "Thanksgiving 2023", W("2023-11-23", "2023-11-23", "day"))
add(H, "last Thanksgiving", W("2023-11-23", "2023-11-23", "day"))
add(H, "Easter 2024", W("2024-03-31", "2024-03-31", "day"))
add(H, "Easter 2023", W("2023-04-09", "2023-04-09", "day"))
add(H, "at Easter", W("2024-03-31", "2024-03-31", "day"))
add(H, "Easter Monday 2025", W("2025-04-21", "2025-04-21", "day"))
add(H, "Good Friday 2024", W("2024-03-29", "2024-03-29", "day"))
add(H, "on Halloween", W("2023-10-31", "2023-10-31", "day"))
add(H, "What will we do on Halloween?", W("2024-10-31", "2024-10-31", "day"))
add(H, "Valentine's Day", W("2024-02-14", "2024-02-14", "day"))
add(H, "valentines day 2022", W("2022-02-14", "2022-02-14", "day"))
add(H, "Black Friday 2023", W("2023-11-24", "2023-11-24", "day"))
add(H, "Memorial Day 2024", W("2024-05-27", "2024-05-27", "day"))
add(H, "Labor Day 2023", W("2023-09-04", "2023-09-04", "day"))
add(H, "Mother's Day 2024", W("2024-05-12", "2024-05-12", "day"))
add(H, "Father's Day", W("2023-06-18", "2023-06-18", "day"))
add(H, "St. Patrick's Day", W("2024-03-17", "2024-03-17", "day"))
add(H, "Independence Day", W("2023-07-04", "2023-07-04", "day"))
add(H, "Boxing Day 2021", W("2021-12-26", "2021-12-26", "day"))
add(H, "the day after Christmas", W("2023-12-26", "2023-12-26", "day"))
add(H, "the weekend before Christmas", W("2023-12-23", "2023-12-24", "weekend"))
add(H, "the week before Thanksgiving 2023", W("2023-11-16", "2023-11-22", "span"))
add(H, "the Monday after Thanksgiving", W("2023-11-27", "2023-11-27", "day"))
add(H, "New Year's Eve", W("2023-12-31", "2023-12-31", "day"), ref=ref("2024-01-10"))
add(H, "Christmas", W("2023-12-25", "2023-12-25", "day"), ref=ref("2023-12-25"))
add(H, "last Christmas", W("2023-12-25", "2023-12-25", "day"), ref=ref("2023-12-26"))

# --- ranges and open windows -------------------------------------------------------------------
G = "range"
add(G, "between March and June 2023", W("2023-03-01", "2023-06-30", "span"))
add(G, "from 2019 to 2021", W("2019-01-01", "2021-12-31", "span"))
add(G, "2019-2021", W("2019-01-01", "2021-12-31", "span"))
add(G, "between January and March", W("2024-01-01", "2024-03-31", "span"))
add(G, "from December to February", W("2023-12-01", "2024-02-29", "span"))
add(G, "from March 2023 to June", W("2023-03-01", "2023-06-30", "span"))
add(G, "between 2010 and 2015", W("2010-01-01", "2015-12-31", "span"))
add(G, "from May 3 to May 10", W("2024-05-03", "2024-05-10", "span"))
add(G, "between May 1 and May 15, 2023", W("2023-05-01", "2023-05-15", "span"))
add(G, "from last week to today", W("2024-06-03", "2024-06-15", "span"))
add(G, "March to June 2023", W("2023-03-01", "2023-06-30", "span"))
add(G, "from the 90s to 2005", W("1990-01-01", "2005-12-31", "span"))
add(G, "between Christmas and New Year's", W("2023-12-25", "2024-01-01", "span"))
add(G, "from 2020 until 2022", W("2020-01-01", "2022-12-31", "span"))
add(G, "since January", W("2024-01-01", "2024-06-15", "span", "after", "2024-01-01"))
add(G, "What has Alice done since 2019?", W("2019-01-01", "2024-06-15", "span", "after", "2019-01-01"))
add(G, "until March", W("2014-04-01", "2024-03-31", "span", "before", "2024-04-01"))
add(G, "before 2020", W("2010-01-01", "2019-12-31", "span", "before", "2020-01-01"))
add(G, "after March 2023", W("2023-04-01", "2024-06-15", "span", "after", "2023-04-01"))
add(G, "since last summer", W("2023-06-01", "2024-06-15", "span", "after", "2023-06-01"))
add(G, "after Christmas", W("2023-12-26", "2024-06-15", "span", "after", "2023-12-26"))
add(G, "before Christmas 2022", W("2012-12-25", "2022-12-24", "span", "before", "2022-12-25"))
add(G, "since yesterday", W("2024-06-14", "2024-06-15", "span", "after", "2024-06-14"))
add(G, "ever since 2015", W("2015-01-01", "2024-06-15", "span", "after", "2015-01-01"))
add(G, "up until last year", W("2014-01-01", "2023-12-31", "span", "before", "2024-01-01"))
add(G, "prior to 2018", W("2008-01-01", "2017-12-31", "span", "before", "2018-01-01"))
add(G, "pre-2020 projects", W("2010-01-01", "2019-12-31", "span", "before", "2020-01-01"))
add(G, "since early 2022", W("2022-01-01", "2024-06-15", "span", "after", "2022-01-01"))

# --- event anchors ------------------------------------------------------------------------------
E = "anchor"
add(E, "What happened before Alice joined Google?", A("before", "Alice joined Google"))
add(E, "What did Bob work on after the reorg?", A("after", "the reorg"))
add(E, "what changed since the merger", A("after", "the merger"))
add(E, "until I moved to Berlin", A("before", "I moved to Berlin"))
add(E, "What did Alice do before she joined Google?", A("before", "she joined Google"))
add(E, "Before Alice joined Google, where did she work?", A("before", "Alice joined Google"))
add(E, "What did Bob do after the reorg and before the launch?", A("after", "the reorg"), A("before", "the launch"))
add(E, "what broke right after the product launch", A("after", "the product launch"))
add(E, "what changed after the 2020 election", A("after", "the 2020 election"))
add(E, "prior to the acquisition", A("before", "the acquisition"))
add(E, "ever since Carol became manager", A("after", "Carol became manager"))
add(E, "what did we see shortly before the outage?", A("before", "the outage"))
add(E, "what did users report after we shipped v2.0", A("after", "we shipped v2.0"))
add(E, "What did Dan do before joining Google?", A("before", "joining Google"))
add(E, "what did the team do after last week's offsite", A("after", "last week's offsite"))
add(E, "Since Alice started at Acme, what has she built?", A("after", "Alice started at Acme"))
add(E, "what happened after Alice joined Google in 2019", A("after", "Alice joined Google in 2019"))
add(E, "What did Dave say in 2023 before he left?", W("2023-01-01", "2023-12-31", "year"), A("before", "he left"))


def all_cases() -> list[Case]:
    """English + multilingual + no-window cases."""
    try:
        from .temporal_corpus_intl import INTL_CASES  # tests/unit as a package
    except ImportError:
        from temporal_corpus_intl import INTL_CASES  # tests/unit on sys.path (pytest's default, the benchmark)
    return CASES + INTL_CASES
