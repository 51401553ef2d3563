"""Word tables for Spanish, French, German, Italian, Portuguese and Russian.

Keys are written as they are spelled; they are folded (lower-case, Latin accents
stripped) when the rules are built, exactly like the query text. Regex
templates use ``{U}`` (a unit word), ``{N}`` (a number), ``{S}`` (a season
word), ``{M}`` (a month name) and ``{Y}`` (a four-digit year).
"""

from __future__ import annotations

from typing import Any

_GERMAN = frozenset("ist sind war waren habe hat haben wir ich was wo wie das der die und nicht mit bin hast "
                             "du er sie es ein eine gibt passiert".split())
_DUTCH = frozenset("is wat het een wij ik zijn".split())

ES: dict[str, Any] = {
    "months": {"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
               "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12},
    "month_pre": r"(?:en|de|del|desde|hasta|durante|antes\s+de|después\s+de|a\s+partir\s+de|entre|y|a|el\s+mes\s+de"
                 r"|mediados\s+de|principios\s+de|finales\s+de|fines\s+de)\s+",
    "day_month": r"(?P<d>[0-3]?\d)\s+de\s+(?P<mon>{M})(?:\s+(?:de|del)\s+(?P<y>{Y}))?",
    "month_year": r"(?P<mon>{M})(?:\s+(?:de|del))?\s+(?P<y>{Y})",
    "day_words": {"antes de ayer": -2, "anteayer": -2, "antier": -2, "ayer": -1, "hoy": 0, "pasado mañana": 2},
    "units": {"día": "day", "días": "day", "semana": "week", "semanas": "week", "mes": "month", "meses": "month",
              "año": "year", "años": "year", "fin de semana": "weekend"},
    "relative": [(r"(?:{U})\s+(?:pasad[oa]|anterior)|pasad[oa]\s+(?:{U})", -1),
                 (r"est[ea]\s+(?:{U})", 0),
                 (r"(?:{U})\s+(?:que\s+viene|pr[oó]xim[oa])|pr[oó]xim[oa]\s+(?:{U})", 1)],
    "ago": [r"hace\s+(?P<n>{N})\s+{U}", r"(?P<n2>{N})\s+{U}\s+atr[aá]s"],
    "numbers": {"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
                "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "quince": 15, "veinte": 20, "treinta": 30},
    "fuzzy": {"unos": (2, 5), "unas": (2, 5), "algunos": (2, 5), "algunas": (2, 5), "varios": (3, 7),
              "varias": (3, 7), "un par de": (1, 3), "pocos": (2, 5), "pocas": (2, 5)},
    "seasons": {"primavera": "spring", "verano": "summer", "otoño": "autumn", "invierno": "winter"},
    "season_rel": [(r"(?:{S})\s+pasad[oa]|pasad[oa]\s+(?:{S})", "last"), (r"est[ea]\s+(?:{S})", "this"),
                   (r"pr[oó]xim[oa]\s+(?:{S})|(?:{S})\s+que\s+viene", "next"),
                   (r"(?:{S})\s+(?:de|del)\s+(?P<y>{Y})|(?:{S})\s+(?P<y2>{Y})", "year"),
                   (r"(?:en|durante|desde|hasta)\s+(?:el\s+|la\s+)?(?:{S})", "past")],
    "cues": "hace atras pasado pasada proximo proxima viene este esta",
}

FR: dict[str, Any] = {
    "months": {"janvier": 1, "février": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "août": 8,
               "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12},
    "month_pre": r"(?:(?:en|de|depuis|jusqu'en|jusqu'à|pendant|avant|après|entre|et|au\s+mois\s+de|le\s+mois\s+de|mi"
                 r"|début|fin|courant|à\s+partir\s+de|du|au)\s+|d'|mi-)",
    "day_month": r"(?P<d>[0-3]?\d)(?:er)?\s+(?P<mon>{M})(?:\s+(?P<y>{Y}))?",
    "month_year": r"(?P<mon>{M})\s+(?P<y>{Y})",
    "day_words": {"avant-hier": -2, "avant hier": -2, "hier": -1, "aujourd'hui": 0, "après-demain": 2,
                  "après demain": 2},
    "day_guard": {"hier": _GERMAN | _DUTCH},
    "units": {"jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "mois": "month", "an": "year",
              "ans": "year", "année": "year", "années": "year", "week-end": "weekend", "weekend": "weekend"},
    "relative": [(r"(?:{U})\s+(?:derni[eè]re?|pass[eé]e?)", -1),
                 (r"(?:cette|ce|cet)\s+(?:{U})(?:-ci)?", 0),
                 (r"(?:{U})\s+prochaine?", 1)],
    "ago": [r"il\s+y\s+a\s+(?P<n>{N})\s+{U}"],
    "numbers": {"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8,
                "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "quinze": 15, "vingt": 20, "trente": 30},
    "fuzzy": {"quelques": (2, 5), "plusieurs": (3, 7)},
    "seasons": {"printemps": "spring", "été": "summer", "automne": "autumn", "hiver": "winter"},
    "season_rel": [(r"(?:{S})\s+(?:derni[eè]r|pass[eé])", "last"), (r"(?:cet|ce)\s+(?:{S})", "this"),
                   (r"(?:{S})\s+prochain", "next"), (r"(?:{S})\s+(?:de\s+)?(?P<y>{Y})", "year"),
                   (r"(?:en|pendant|depuis|au|durant)\s+(?:l'|le\s+)?(?:{S})", "past")],
    "cues": "il derniere dernier passee passe prochaine prochain cette ce cet",
}

DE: dict[str, Any] = {
    "months": {"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "april": 4, "mai": 5, "juni": 6,
               "juli": 7, "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12},
    "month_pre": r"(?:im|in|seit|bis|ab|vor|nach|zwischen|und|von|vom|anfang|mitte|ende|monat|des)\s+",
    "day_month": r"(?P<d>[0-3]?\d)\.\s*(?P<mon>{M})(?:\s+(?P<y>{Y}))?",
    "month_year": r"(?P<mon>{M})\s+(?P<y>{Y})",
    "day_words": {"vorgestern": -2, "gestern": -1, "heute morgen": 0, "heute abend": 0, "heute": 0,
                  "übermorgen": 2},
    "units": {"tag": "day", "tage": "day", "tagen": "day", "woche": "week", "wochen": "week", "monat": "month",
              "monate": "month", "monaten": "month", "jahr": "year", "jahre": "year", "jahren": "year",
              "wochenende": "weekend"},
    "relative": [(r"(?:letzt|vergangen|vorig)(?:e|er|en|es|em)\s+(?:{U})", -1),
                 (r"dies(?:e|er|en|es|em)\s+(?:{U})", 0),
                 (r"n[aä]chst(?:e|er|en|es|em)\s+(?:{U})", 1)],
    "ago": [r"vor\s+(?P<n>{N})\s+{U}"],
    "numbers": {"ein": 1, "eine": 1, "einem": 1, "einer": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4,
                "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
                "zwanzig": 20, "dreißig": 30},
    "fuzzy": {"ein paar": (2, 5), "einigen": (2, 5), "wenigen": (2, 5), "mehreren": (3, 7)},
    "seasons": {"frühling": "spring", "frühjahr": "spring", "sommer": "summer", "herbst": "autumn",
                "winter": "winter"},
    "season_rel": [(r"(?:letzt|vergangen|vorig)(?:e|er|en|es|em)\s+(?:{S})", "last"),
                   (r"dies(?:e|er|en|es|em)\s+(?:{S})", "this"), (r"n[aä]chst(?:e|er|en|es|em)\s+(?:{S})", "next"),
                   (r"(?:{S})\s+(?P<y>{Y})", "year"), (r"(?:im|seit|den\s+ganzen)\s+(?:{S})", "past")],
    "cues": "vor letzte letzten letzter letztes vergangene vergangenen voriges vorige vorigen diese dieser diesen "
            "dieses diesem nachste nachsten nachstes",
}

IT: dict[str, Any] = {
    "months": {"gennaio": 1, "febbraio": 2, "marzo": 3, "aprile": 4, "maggio": 5, "giugno": 6, "luglio": 7,
               "agosto": 8, "settembre": 9, "ottobre": 10, "novembre": 11, "dicembre": 12},
    "month_pre": r"(?:(?:a|ad|in|di|da|dal|fino\s+a|durante|prima\s+di|dopo|tra|fra|e|nel\s+mese\s+di|nel|entro"
                 r"|met[aà]|inizio|fine)\s+|d'|a\s+fine\s+|ad\s+inizio\s+)",
    "day_month": r"(?P<d>[0-3]?\d)\s+(?P<mon>{M})(?:\s+(?P<y>{Y}))?",
    "month_year": r"(?P<mon>{M})(?:\s+del)?\s+(?P<y>{Y})",
    "day_words": {"l'altro ieri": -2, "altroieri": -2, "ieri l'altro": -2, "ieri": -1, "oggi": 0,
                  "dopodomani": 2},
    "units": {"giorno": "day", "giorni": "day", "settimana": "week", "settimane": "week", "mese": "month",
              "mesi": "month", "anno": "year", "anni": "year", "fine settimana": "weekend", "weekend": "weekend"},
    "relative": [(r"(?:{U})\s+(?:scors[oa]|passat[oa])|scors[oa]\s+(?:{U})", -1),
                 (r"quest[oa]\s+(?:{U})|quest'(?:{U})", 0),
                 (r"(?:{U})\s+prossim[oa]|prossim[oa]\s+(?:{U})", 1)],
    "ago": [r"(?P<n>{N})\s+{U}\s+fa"],
    "numbers": {"un": 1, "uno": 1, "una": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7,
                "otto": 8, "nove": 9, "dieci": 10, "undici": 11, "dodici": 12, "quindici": 15, "venti": 20,
                "trenta": 30},
    "fuzzy": {"qualche": (2, 5), "alcuni": (2, 5), "alcune": (2, 5), "pochi": (2, 5), "poche": (2, 5),
              "un paio di": (1, 3), "diversi": (3, 7), "diverse": (3, 7)},
    "seasons": {"primavera": "spring", "estate": "summer", "autunno": "autumn", "inverno": "winter"},
    "season_rel": [(r"(?:{S})\s+(?:scors[oa]|passat[oa])|scors[oa]\s+(?:{S})", "last"),
                   (r"quest[oa]\s+(?:{S})|quest'(?:{S})", "this"),
                   (r"(?:{S})\s+prossim[oa]|prossim[oa]\s+(?:{S})", "next"),
                   (r"(?:{S})\s+(?:del\s+)?(?P<y>{Y})", "year"),
                   (r"(?:in|durante|d'|nell'|nella)\s*(?:l')?(?:{S})", "past")],
    "cues": "fa scorsa scorso passato passata prossimo prossima questa questo quest",
}

PT: dict[str, Any] = {
    "months": {"janeiro": 1, "fevereiro": 2, "março": 3, "abril": 4, "maio": 5, "junho": 6, "julho": 7,
               "agosto": 8, "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12},
    "month_pre": r"(?:em|de|desde|até|durante|antes\s+de|depois\s+de|entre|e|no\s+m[eê]s\s+de|a\s+partir\s+de"
                 r"|meados\s+de|in[ií]cio\s+de|fim\s+de|final\s+de)\s+",
    "day_month": r"(?P<d>[0-3]?\d)\s+de\s+(?P<mon>{M})(?:\s+de\s+(?P<y>{Y}))?",
    "month_year": r"(?P<mon>{M})(?:\s+de)?\s+(?P<y>{Y})",
    "day_words": {"antes de ontem": -2, "anteontem": -2, "ontem": -1, "hoje": 0, "depois de amanhã": 2},
    "units": {"dia": "day", "dias": "day", "semana": "week", "semanas": "week", "mês": "month", "meses": "month",
              "ano": "year", "anos": "year", "fim de semana": "weekend"},
    "relative": [(r"(?:{U})\s+(?:passad[oa]|anterior)|passad[oa]\s+(?:{U})", -1),
                 (r"(?:est[ea]|nest[ea])\s+(?:{U})", 0),
                 (r"pr[oó]xim[oa]\s+(?:{U})|(?:{U})\s+que\s+vem", 1)],
    "ago": [r"(?:h[aá]|faz)\s+(?P<n>{N})\s+{U}", r"(?P<n2>{N})\s+{U}\s+atr[aá]s"],
    "numbers": {"um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "quatro": 4, "cinco": 5, "seis": 6, "sete": 7,
                "oito": 8, "nove": 9, "dez": 10, "onze": 11, "doze": 12, "quinze": 15, "vinte": 20, "trinta": 30},
    "fuzzy": {"alguns": (2, 5), "algumas": (2, 5), "poucos": (2, 5), "poucas": (2, 5), "uns": (2, 5),
              "umas": (2, 5), "vários": (3, 7), "várias": (3, 7)},
    "seasons": {"primavera": "spring", "verão": "summer", "outono": "autumn", "inverno": "winter"},
    "season_rel": [(r"(?:{S})\s+(?:passad[oa]|anterior)", "last"), (r"(?:est[ea]|nest[ea])\s+(?:{S})", "this"),
                   (r"pr[oó]xim[oa]\s+(?:{S})|(?:{S})\s+que\s+vem", "next"),
                   (r"(?:{S})\s+de\s+(?P<y>{Y})", "year"), (r"(?:no|na|em|durante\s+o|durante\s+a)\s+(?:{S})", "past")],
    "cues": "ha faz atras passado passada proximo proxima vem este esta neste nesta",
}

RU: dict[str, Any] = {
    "months": {
        **{f: 1 for f in ("январь", "января", "январе")}, **{f: 2 for f in ("февраль", "февраля", "феврале")},
        **{f: 3 for f in ("март", "марта", "марте")}, **{f: 4 for f in ("апрель", "апреля", "апреле")},
        **{f: 5 for f in ("май", "мая", "мае")}, **{f: 6 for f in ("июнь", "июня", "июне")},
        **{f: 7 for f in ("июль", "июля", "июле")}, **{f: 8 for f in ("август", "августа", "августе")},
        **{f: 9 for f in ("сентябрь", "сентября", "сентябре")}, **{f: 10 for f in ("октябрь", "октября", "октябре")},
        **{f: 11 for f in ("ноябрь", "ноября", "ноябре")}, **{f: 12 for f in ("декабрь", "декабря", "декабре")},
    },
    "month_pre": r"(?:в|во|с|со|до|по|после|между|и|к|начале|середине|конце|течение)\s+",
    "day_month": r"(?P<d>[0-3]?\d)\s+(?P<mon>{M})(?:\s+(?P<y>{Y})(?:\s*(?:года|г\.?))?)?",
    "month_year": r"(?P<mon>{M})\s+(?P<y>{Y})(?:\s*(?:года|году|год|г\.?))?",
    "day_words": {"позавчера": -2, "вчера": -1, "сегодня": 0, "послезавтра": 2},
    "units": {"день": "day", "дня": "day", "дней": "day", "неделя": "week", "недели": "week", "неделе": "week",
              "неделю": "week", "недель": "week", "месяц": "month", "месяца": "month", "месяце": "month",
              "месяцев": "month", "год": "year", "года": "year", "году": "year", "лет": "year",
              "выходные": "weekend", "выходных": "weekend"},
    "relative": [(r"прошл\w*\s+(?:{U})", -1), (r"(?:эт(?:от|ой|ом|у|и|их)|текущ\w*)\s+(?:{U})", 0),
                 (r"(?:следующ|будущ)\w*\s+(?:{U})", 1)],
    "ago": [r"(?:(?P<n>{N})\s+)?{U}\s+назад"],
    "numbers": {"один": 1, "одну": 1, "одна": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6,
                "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "двадцать": 20, "тридцать": 30},
    "fuzzy": {"несколько": (2, 5), "пару": (1, 3)},
    "seasons": {"весна": "spring", "весной": "spring", "весну": "spring", "лето": "summer", "летом": "summer",
                "осень": "autumn", "осенью": "autumn", "зима": "winter", "зимой": "winter", "зиму": "winter"},
    "season_rel": [(r"прошл\w*\s+(?:{S})", "last"), (r"эт\w*\s+(?:{S})", "this"),
                   (r"(?:следующ|будущ)\w*\s+(?:{S})", "next"),
                   (r"(?:{S})\s+(?P<y>{Y})(?:\s*года)?", "year"), (r"(?:весной|летом|осенью|зимой)", "past")],
    "cues": "назад прошлой прошлом прошлые прошлую прошлым прошлого этой этом этот эти этим следующей следующем "
            "следующий будущем",
}

LANGUAGES: dict[str, dict[str, Any]] = {"es": ES, "fr": FR, "de": DE, "it": IT, "pt": PT, "ru": RU}
