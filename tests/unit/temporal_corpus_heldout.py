"""A held-out set: cases written after the rules, never used to tune them.

The benchmark reports its accuracy next to the main corpus (which the rules were
developed against, so it passes by construction). Failures here are real misses
and are listed by the benchmark; they are not part of the unit tests.
"""

from __future__ import annotations

try:
    from .temporal_corpus import A, Case, W
except ImportError:
    from temporal_corpus import A, Case, W

HELDOUT: list[Case] = []


def add(category: str, query: str, *expect: W | A) -> None:
    HELDOUT.append(Case(category, query, tuple(expect)))


add("calendar", "What did Alice do in April 2022?", W("2022-04-01", "2022-04-30", "month"))
add("calendar", "in the summer of 2020", W("2020-06-01", "2020-08-31", "season"))
add("calendar", "during Q2 2022", W("2022-04-01", "2022-06-30", "quarter"))
add("calendar", "the spring of 2019", W("2019-03-01", "2019-05-31", "season"))
add("calendar", "on January 15th, 2024", W("2024-01-15", "2024-01-15", "day"))
add("calendar", "what happened on 2022/11/03", W("2022-11-03", "2022-11-03", "day"))
add("calendar", "the late 1980s", W("1987-01-01", "1989-12-31", "span"))
add("calendar", "in the winter", W("2023-12-01", "2024-02-29", "season"))
add("calendar", "in October", W("2023-10-01", "2023-10-31", "month"))
add("calendar", "last September", W("2023-09-01", "2023-09-30", "month"))
add("calendar", "the first half of the year", W("2024-01-01", "2024-06-30", "half"))
add("calendar", "early last year", W("2023-01-01", "2023-04-30", "span"))
add("calendar", "on Saturday", W("2024-06-15", "2024-06-15", "day"))
add("calendar", "the 1970s", W("1970-01-01", "1979-12-31", "decade"))
add("relative", "four days ago", W("2024-06-11", "2024-06-11", "day"))
add("relative", "a week ago", W("2024-06-03", "2024-06-09", "week"))
add("relative", "three months ago", W("2024-03-01", "2024-03-31", "month"))
add("relative", "in the past 2 weeks", W("2024-06-01", "2024-06-15", "span"))
add("relative", "the last few days", W("2024-06-10", "2024-06-15", "span"))
add("relative", "last night's dinner", W("2024-06-14", "2024-06-14", "day"))
add("relative", "yesterday afternoon", W("2024-06-14", "2024-06-14", "day"))
add("relative", "this time last year", W("2023-01-01", "2023-12-31", "year"))
add("relative", "within the last month", W("2024-05-15", "2024-06-15", "span"))
add("relative", "over the last 6 months", W("2023-12-15", "2024-06-15", "span"))
add("relative", "earlier this week", W("2024-06-10", "2024-06-15", "span"))
add("relative", "next weekend", W("2024-06-22", "2024-06-23", "weekend"))
add("relative", "a couple days ago", W("2024-06-12", "2024-06-14", "span"))
add("relative", "10 years ago", W("2014-01-01", "2014-12-31", "year"))
add("holiday", "Christmas 2019", W("2019-12-25", "2019-12-25", "day"))
add("holiday", "on Thanksgiving", W("2023-11-23", "2023-11-23", "day"))
add("holiday", "New Year's Day 2023", W("2023-01-01", "2023-01-01", "day"))
add("holiday", "Easter last year", W("2023-04-09", "2023-04-09", "day"))
add("holiday", "Halloween 2021", W("2021-10-31", "2021-10-31", "day"))
add("holiday", "over the Christmas holidays", W("2023-12-25", "2023-12-25", "day"))
add("range", "between 2018 and 2020", W("2018-01-01", "2020-12-31", "span"))
add("range", "from January to March 2023", W("2023-01-01", "2023-03-31", "span"))
add("range", "since March", W("2024-03-01", "2024-06-15", "span", "after", "2024-03-01"))
add("range", "after 2021", W("2022-01-01", "2024-06-15", "span", "after", "2022-01-01"))
add("range", "before last summer", W("2013-06-01", "2023-05-31", "span", "before", "2023-06-01"))
add("range", "until yesterday", W("2014-06-15", "2024-06-14", "span", "before", "2024-06-15"))
add("range", "from June to August 2022", W("2022-06-01", "2022-08-31", "span"))
add("anchor", "What did Alice do after she left Microsoft?", A("after", "she left Microsoft"))
add("anchor", "before the funding round", A("before", "the funding round"))
add("anchor", "since Bob took over the team", A("after", "Bob took over the team"))
add("anchor", "what did we discuss before the demo?", A("before", "the demo"))
for q in [
    "How do I reset my password?",
    "What's the capital of France?",
    "Alice has 3 cats",
    "Listen on port 5432",
    "The API returns 500 errors",
    "He scored 2010 points",
    "Summer is Alice's sister",
    "Who is Ruby Tuesday?",
    "the March for Science",
    "What does the 404 page say?",
    "since when has Alice worked here?",
]:
    add("no-window", q)
add("multilingual-es", "la semana que viene", W("2024-06-17", "2024-06-23", "week"))
add("multilingual-fr", "il y a un mois", W("2024-05-01", "2024-05-31", "month"))
add("multilingual-de", "vorgestern", W("2024-06-13", "2024-06-13", "day"))
add("multilingual-it", "l'anno prossimo", W("2025-01-01", "2025-12-31", "year"))
add("multilingual-pt", "semana que vem", W("2024-06-17", "2024-06-23", "week"))
add("multilingual-ru", "позавчера", W("2024-06-13", "2024-06-13", "day"))
add("multilingual-zh", "前天", W("2024-06-13", "2024-06-13", "day"))
add("multilingual-ja", "来月", W("2024-07-01", "2024-07-31", "month"))
add("multilingual-ko", "내년", W("2025-01-01", "2025-12-31", "year"))
add("multilingual-zh", "5天前", W("2024-06-10", "2024-06-10", "day"))
add("multilingual-es", "en marzo", W("2024-03-01", "2024-03-31", "month"))
add("multilingual-de", "im Juli", W("2023-07-01", "2023-07-31", "month"))
