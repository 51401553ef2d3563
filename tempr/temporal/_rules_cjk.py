"""Chinese, Japanese and Korean rules: 2023年5月3日 / 2023년 5월, 昨天 / 昨日 / 어제,
上周 / 先週 / 지난주, 三天前 / 3日前 / 3일 전, 去年夏天, 第三季度, 上半年, holidays.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Atom, Ctx, Rule, make_atom
from tempr.temporal._holidays import resolver as holiday_resolver
from tempr.temporal._lexicon import alt
from tempr.temporal._rules_relative import RECENT_DAYS, rolling, shift, unit_window, units_ago
from tempr.temporal._text import CN_NUM, cn_number

CJK_CUE_CHARS = (
    r"[年月日天周週星昨今去前后後先来來明拜季春夏秋冬旦晦节節诞誕最近末頃]"
    r"|おととい|きのう|きょう|あした|クリスマス|ハロウィン|バレンタイン|おととし"
)
HANGUL_CUES = (
    r"어제|오늘|그저께|그제|엊그제|내일|모레|지난|저번|이번|다음|작년|올해|금년|내년|재작년|최근|요즘"
    r"|전|년|월|일|주|분기|반기|봄|여름|가을|겨울|크리스마스|할로윈|발렌타인|새해|성탄"
)
ZJ, KO = "zh|ja", "ko"
_CJK = frozenset({"#cjk"})
_HANGUL = frozenset({"#hangul"})

_REL_YEAR = {
    "去年": -1,
    "昨年": -1,
    "今年": 0,
    "明年": 1,
    "来年": 1,
    "來年": 1,
    "前年": -2,
    "一昨年": -2,
    "おととし": -2,
    "작년": -1,
    "지난해": -1,
    "올해": 0,
    "금년": 0,
    "내년": 1,
    "재작년": -2,
}
_RY = alt(_REL_YEAR)
_DAYS = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨日": -1,
    "今天": 0,
    "今日": 0,
    "明天": 1,
    "后天": 2,
    "後天": 2,
    "一昨日": -2,
    "おととい": -2,
    "きのう": -1,
    "きょう": 0,
    "明日": 1,
    "あした": 1,
    "明後日": 2,
    "그저께": -2,
    "그제": -2,
    "엊그제": -2,
    "어제": -1,
    "오늘": 0,
    "내일": 1,
    "모레": 2,
}
_RELATIVE = {
    # (unit, delta)
    **{
        w: ("week", -1)
        for w in (
            "上周",
            "上週",
            "上个星期",
            "上個星期",
            "上星期",
            "上个礼拜",
            "上個禮拜",
            "上礼拜",
            "上禮拜",
            "上一周",
            "先週",
            "지난주",
            "지난 주",
            "저번주",
            "저번 주",
        )
    },
    **{w: ("week", -2) for w in ("上上周", "上上週", "先々週", "先先週")},
    **{
        w: ("week", 0)
        for w in (
            "这周",
            "這週",
            "这週",
            "本周",
            "本週",
            "这个星期",
            "這個星期",
            "这星期",
            "本星期",
            "这个礼拜",
            "今週",
            "이번주",
            "이번 주",
            "금주",
        )
    },
    **{
        w: ("week", 1)
        for w in ("下周", "下週", "下个星期", "下個星期", "下星期", "下礼拜", "来週", "來週", "다음주", "다음 주")
    },
    **{w: ("month", -1) for w in ("上个月", "上個月", "上月", "先月", "지난달", "지난 달", "저번달", "저번 달")},
    **{w: ("month", 0) for w in ("这个月", "這個月", "本月", "这月", "今月", "이번달", "이번 달", "이달")},
    **{w: ("month", 1) for w in ("下个月", "下個月", "下月", "来月", "來月", "다음달", "다음 달")},
    **{w: ("weekend", -1) for w in ("上周末", "上週末", "先週末", "지난 주말", "지난주말")},
    **{w: ("weekend", 0) for w in ("这周末", "這週末", "本周末", "今週末", "이번 주말", "이번주말")},
    **{w: ("quarter", -1) for w in ("上季度", "上个季度", "上個季度", "前四半期", "지난 분기", "지난분기")},
    **{w: ("quarter", 0) for w in ("本季度", "这个季度", "這個季度", "今四半期", "이번 분기", "이번분기")},
    **{w: ("year", d) for w, d in _REL_YEAR.items()},
}
_HALF = {"上半年": 1, "下半年": 2, "上半期": 1, "下半期": 2, "상반기": 1, "하반기": 2}
_SEASON = {
    "春天": "spring",
    "春季": "spring",
    "春": "spring",
    "夏天": "summer",
    "夏季": "summer",
    "夏": "summer",
    "秋天": "autumn",
    "秋季": "autumn",
    "秋": "autumn",
    "冬天": "winter",
    "冬季": "winter",
    "冬": "winter",
    "봄": "spring",
    "여름": "summer",
    "가을": "autumn",
    "겨울": "winter",
}
_HOLIDAYS = {
    "圣诞节": "christmas",
    "聖誕節": "christmas",
    "圣诞": "christmas",
    "クリスマス": "christmas",
    "크리스마스": "christmas",
    "성탄절": "christmas",
    "平安夜": "christmas eve",
    "元旦": "new year's day",
    "元日": "new year's day",
    "새해 첫날": "new year's day",
    "大晦日": "new year's eve",
    "情人节": "valentine's day",
    "バレンタインデー": "valentine's day",
    "발렌타인데이": "valentine's day",
    "万圣节": "halloween",
    "ハロウィン": "halloween",
    "할로윈": "halloween",
}
_UNITS = {
    "天": "day",
    "日": "day",
    "일": "day",
    "周": "week",
    "週": "week",
    "週間": "week",
    "星期": "week",
    "礼拜": "week",
    "禮拜": "week",
    "주": "week",
    "주일": "week",
    "月": "month",
    "개월": "month",
    "달": "month",
    "年": "year",
    "년": "year",
}
_KO_NUM = {"한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}
_KO_SPECIAL = {"이틀": (2, "day"), "사흘": (3, "day"), "나흘": (4, "day"), "일주일": (1, "week"), "보름": (15, "day")}
_FEW = "几幾数數몇"
_N = rf"(?<![0-9零〇一二两兩三四五六七八九十百])(?:{CN_NUM}|[{_FEW}]|{alt(_KO_NUM)})"
_ZJ_UNIT = r"(?:天|日|週間|周|週|(?:个|個)?星期|(?:个|個)?礼拜|(?:个|個)?禮拜|(?:个|個|ヶ|か|カ|ヵ|箇)月|年)"
_KO_UNIT = r"(?:일|주일|주|개월|달|년)"
_Y4 = r"(?P<y>(?:1[89]|2[01])\d\d)"


def _count(text: str) -> int | tuple[int, int] | None:
    if text in _FEW:
        return (2, 5)
    return _KO_NUM.get(text) or cn_number(text)


def _unit(text: str) -> str:
    return _UNITS.get(text) or _UNITS.get(text[-1]) or _UNITS.get(text[-2:], "day")


def _r(name: str, tier: int, pattern: str, lang: str, fn: Callable[[re.Match[str], Ctx], Atom | None]) -> Rule:
    cues = (_HANGUL if "ko" in lang else frozenset()) | (_CJK if "zh" in lang or "ja" in lang else frozenset())
    return Rule(name, tier, re.compile(pattern), fn, cues, lang)


def _year_of(m: re.Match[str], ctx: Ctx) -> int | None:
    if m.groupdict().get("y"):
        return int(m["y"])
    if m.groupdict().get("r"):
        return ctx.ref.year + _REL_YEAR[m["r"]]
    return None


def _day_resolver(mm: int, dd: int) -> cal.Resolver:
    def resolve(y: int) -> TimeWindow | None:
        d = cal.safe_date(y, mm, dd)
        return cal.day(d) if d else None

    return resolve


def _dated(m: re.Match[str], ctx: Ctx, resolve: cal.Resolver, kind: str) -> Atom | None:
    y = _year_of(m, ctx)
    if y is not None:
        return make_atom(m, resolve(y), kind)
    return make_atom(m, ctx.choose(resolve), kind, resolve=resolve)


def _date(m: re.Match[str], ctx: Ctx) -> Atom | None:
    mm, dd = cn_number(m["m"]), cn_number(m["d"])
    return _dated(m, ctx, _day_resolver(mm or 0, dd or 0), "date")


def _month(m: re.Match[str], ctx: Ctx) -> Atom | None:
    mm = cn_number(m["m"]) or 0
    if not 1 <= mm <= 12:
        return None
    return _dated(m, ctx, lambda y: cal.month(y, mm), "month")


def _year(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.year(int(m["y"])), "year")


def _decade(m: re.Match[str], ctx: Ctx) -> Atom | None:
    if m["c"]:
        first = int(m["c"]) * 10
    else:
        first = 2000 + int(m["d"]) * 10
        first = first - 100 if first > ctx.ref.year else first
    return make_atom(m, cal.decade(first), "decade")


def _day_word(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.day(ctx.today + timedelta(days=_DAYS[m.group()])), "date")


def _relative(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit, delta = _RELATIVE[m.group()]
    if unit == "weekend":
        return make_atom(m, cal.weekend_of_week(ctx.today + timedelta(days=7 * delta)), "weekend")
    return make_atom(m, unit_window(unit, shift(unit, ctx.today, delta)), "year" if unit == "year" else "relative")


def _ago(m: re.Match[str], ctx: Ctx) -> Atom | None:
    if m.groupdict().get("sp"):
        n, unit = _KO_SPECIAL[m["sp"]]
        if unit == "day":
            return make_atom(m, cal.day(ctx.today - timedelta(days=n)), "relative")
        return make_atom(m, units_ago(unit, ctx.today, n, n), "relative")
    count, unit = _count(m["n"]), _unit(m["u"])
    if count is None or (isinstance(count, int) and count > 500):
        return None
    lo, hi = count if isinstance(count, tuple) else (count, count)
    return make_atom(m, units_ago(unit, ctx.today, lo, hi), "relative" if lo == hi else "span")


def _rolling(m: re.Match[str], ctx: Ctx) -> Atom | None:
    count = _count(m["n"])
    if count is None:
        return None
    n = count[1] if isinstance(count, tuple) else count
    return make_atom(m, rolling(_unit(m["u"]), ctx.today, n), "span")


def _recently(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.days(ctx.today - timedelta(days=RECENT_DAYS), ctx.today), "span")


def _season(m: re.Match[str], ctx: Ctx) -> Atom | None:
    name = _SEASON[m["s"]]
    return _dated(m, ctx, lambda y: cal.season(y, name, ctx.hemisphere), "season")


def _quarter(m: re.Match[str], ctx: Ctx) -> Atom | None:
    q = cn_number(m["q"]) or 0
    if not 1 <= q <= 4:
        return None
    return _dated(m, ctx, lambda y: cal.quarter(y, q), "quarter")


def _half(m: re.Match[str], ctx: Ctx) -> Atom | None:
    y = _year_of(m, ctx)
    return make_atom(m, cal.half(ctx.ref.year if y is None else y, _HALF[m["h"]]), "half")


def _holiday(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return _dated(m, ctx, holiday_resolver(_HOLIDAYS[m["h"]]), "holiday")


_MON = r"(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_DD = r"(?P<d>[12]\d|3[01]|0?[1-9]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"
_YP = rf"(?:{_Y4}\s*[年년]\s*|(?P<r>{_RY})\s*(?:的|の)?\s*)"

RULES: tuple[Rule, ...] = (
    _r("cjk-date", 10, rf"(?<!\d){_YP}?{_MON}\s*月\s*{_DD}\s*[日号號]", ZJ, _date),
    _r("ko-date", 10, rf"(?<!\d){_YP}?(?P<m>1[0-2]|0?[1-9])\s*월\s*(?P<d>[12]\d|3[01]|0?[1-9])\s*일", KO, _date),
    _r("cjk-decade", 15, r"(?<!\d)(?:(?P<c>(?:1[89]|20)\d)0|(?P<d>\d)0)\s*(?:年代|년대)", ZJ + "|ko", _decade),
    _r("cjk-month", 15, rf"(?<!\d){_YP}{_MON}\s*月(?:份)?", ZJ, _month),
    _r("ko-month", 15, rf"(?<!\d){_YP}(?P<m>1[0-2]|0?[1-9])\s*월", KO, _month),
    _r("cjk-quarter", 20, rf"{_YP}?第\s*(?P<q>[1-4一二三四])\s*(?:季度|季|四半期)", ZJ, _quarter),
    _r("ko-quarter", 20, rf"{_YP}?(?P<q>[1-4])\s*분기", KO, _quarter),
    _r("cjk-half", 20, rf"{_YP}?(?P<h>{alt(_HALF)})", ZJ + "|ko", _half),
    _r("cjk-season", 20, rf"{_YP}(?P<s>{alt(_SEASON)})", ZJ + "|ko", _season),
    _r("cjk-holiday", 20, rf"{_YP}?(?P<h>{alt(_HOLIDAYS)})", ZJ + "|ko", _holiday),
    _r(
        "cjk-rolling",
        24,
        rf"(?:过去|過去|最近|近|直近|ここ)\s*(?P<n>{_N})\s*(?P<u>{_ZJ_UNIT})(?:以来|来|間)?",
        ZJ,
        _rolling,
    ),
    _r("ko-rolling", 24, rf"(?:지난|최근)\s*(?P<n>{_N})\s*(?P<u>{_KO_UNIT})", KO, _rolling),
    _r("cjk-ago", 25, rf"(?P<n>{_N})\s*(?P<u>{_ZJ_UNIT})\s*(?:以|之)?前", ZJ, _ago),
    _r(
        "ko-ago",
        25,
        rf"(?:(?P<sp>{alt(_KO_SPECIAL)})|(?P<n>\d{{1,3}}|{alt(_KO_NUM)}|몇)\s*(?P<u>{_KO_UNIT}))\s*전",
        KO,
        _ago,
    ),
    _r("cjk-relative", 30, alt(_RELATIVE), ZJ + "|ko", _relative),
    _r("cjk-day", 30, alt(_DAYS), ZJ + "|ko", _day_word),
    _r("cjk-recently", 32, r"最近(?!的|\s*\d)|近期|近来|近來|近頃|このごろ|최근|요즘", ZJ + "|ko", _recently),
    _r(
        "cjk-month-bare",
        40,
        r"(?<![\d年])(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?:份)?(?![\d曜])",
        ZJ,
        _month,
    ),
    _r("ko-month-bare", 40, r"(?<!\d)(?P<m>1[0-2]|0?[1-9])\s*월(?!\s*\d)", KO, _month),
    _r("cjk-year", 50, rf"(?<!\d){_Y4}\s*[年년](?!\s*\d)(?!代|대)", ZJ + "|ko", _year),
)
