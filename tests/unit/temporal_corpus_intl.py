"""Multilingual and no-window cases of the temporal corpus (reference 2024-06-15, a Saturday)."""

from __future__ import annotations

try:
    from .temporal_corpus import A, Case, W, ref
except ImportError:
    from temporal_corpus import A, Case, W, ref

INTL_CASES: list[Case] = []
_ = A  # anchors are English-only (documented)

YESTERDAY = W("2024-06-14", "2024-06-14", "day")
TODAY = W("2024-06-15", "2024-06-15", "day")
THREE_DAYS_AGO = W("2024-06-12", "2024-06-12", "day")
LAST_WEEK = W("2024-06-03", "2024-06-09", "week")
THIS_WEEK = W("2024-06-10", "2024-06-16", "week")
TWO_WEEKS_AGO = W("2024-05-27", "2024-06-02", "week")
LAST_MONTH = W("2024-05-01", "2024-05-31", "month")
THREE_MONTHS_AGO = W("2024-03-01", "2024-03-31", "month")
LAST_YEAR = W("2023-01-01", "2023-12-31", "year")
THIS_YEAR = W("2024-01-01", "2024-12-31", "year")
MAY_2023 = W("2023-05-01", "2023-05-31", "month")
MAY_3_2023 = W("2023-05-03", "2023-05-03", "day")
LAST_SUMMER = W("2023-06-01", "2023-08-31", "season")
LAST_MONDAY = W("2024-06-10", "2024-06-10", "day")
SINCE_JANUARY = W("2024-01-01", "2024-06-15", "span", "after", "2024-01-01")
RECENTLY = W("2024-05-16", "2024-06-15", "span")


def year(y: int) -> W:
    return W(f"{y}-01-01", f"{y}-12-31", "year")


def add(lang: str, query: str, *expect: W | A) -> None:
    INTL_CASES.append(Case(f"multilingual-{lang}", query, tuple(expect)))


def none(query: str, **kw: object) -> None:
    INTL_CASES.append(Case("no-window", query, (), **kw))  # type: ignore[arg-type]


# --- Spanish ------------------------------------------------------------------------------------
add("es", "¿Qué hice ayer?", YESTERDAY)
add("es", "¿Qué pasó la semana pasada?", LAST_WEEK)
add("es", "¿Qué hizo Bob el mes pasado?", LAST_MONTH)
add("es", "¿Qué hizo Alice el año pasado?", LAST_YEAR)
add("es", "¿Qué hice hace 3 días?", THREE_DAYS_AGO)
add("es", "hace dos semanas", TWO_WEEKS_AGO)
add("es", "¿Qué pasó en mayo de 2023?", MAY_2023)
add("es", "¿Qué pasó en 2022?", year(2022))
add("es", "¿Qué hice hoy?", TODAY)
add("es", "hace un mes", LAST_MONTH)
add("es", "el 3 de mayo de 2023", MAY_3_2023)
add("es", "esta semana", THIS_WEEK)
add("es", "¿Qué hice el lunes pasado?", LAST_MONDAY)
add("es", "desde enero", SINCE_JANUARY)
add("es", "el verano pasado", LAST_SUMMER)

# --- French -------------------------------------------------------------------------------------
add("fr", "Qu'est-ce que j'ai fait hier ?", YESTERDAY)
add("fr", "la semaine dernière", LAST_WEEK)
add("fr", "Qu'a fait Bob le mois dernier ?", LAST_MONTH)
add("fr", "l'année dernière", LAST_YEAR)
add("fr", "il y a 3 jours", THREE_DAYS_AGO)
add("fr", "il y a deux semaines", TWO_WEEKS_AGO)
add("fr", "Que s'est-il passé en mai 2023 ?", MAY_2023)
add("fr", "en 2021", year(2021))
add("fr", "aujourd'hui", TODAY)
add("fr", "cette année", THIS_YEAR)
add("fr", "le 3 mai 2023", MAY_3_2023)
add("fr", "l'été dernier", LAST_SUMMER)
add("fr", "depuis janvier", SINCE_JANUARY)
add("fr", "Qu'ai-je fait lundi dernier ?", LAST_MONDAY)

# --- German -------------------------------------------------------------------------------------
add("de", "Was habe ich gestern gemacht?", YESTERDAY)
add("de", "Was habe ich letzte Woche gemacht?", LAST_WEEK)
add("de", "Was hat Bob letzten Monat gemacht?", LAST_MONTH)
add("de", "letztes Jahr", LAST_YEAR)
add("de", "vor 3 Tagen", THREE_DAYS_AGO)
add("de", "vor zwei Wochen", TWO_WEEKS_AGO)
add("de", "im Mai 2023", MAY_2023)
add("de", "im Jahr 2020", year(2020))
add("de", "heute", TODAY)
add("de", "vor drei Monaten", THREE_MONTHS_AGO)
add("de", "am 3. Mai 2023", MAY_3_2023)
add("de", "diese Woche", THIS_WEEK)
add("de", "letzten Sommer", LAST_SUMMER)
add("de", "seit Januar", SINCE_JANUARY)
add("de", "Was habe ich letzten Montag gemacht?", LAST_MONDAY)

# --- Italian ------------------------------------------------------------------------------------
add("it", "Cosa ho fatto ieri?", YESTERDAY)
add("it", "la settimana scorsa", LAST_WEEK)
add("it", "il mese scorso", LAST_MONTH)
add("it", "Cosa ha fatto Alice l'anno scorso?", LAST_YEAR)
add("it", "3 giorni fa", THREE_DAYS_AGO)
add("it", "due settimane fa", TWO_WEEKS_AGO)
add("it", "a maggio 2023", MAY_2023)
add("it", "nel 2022", year(2022))
add("it", "oggi", TODAY)
add("it", "tre mesi fa", THREE_MONTHS_AGO)
add("it", "questa settimana", THIS_WEEK)
add("it", "l'estate scorsa", LAST_SUMMER)
add("it", "il 3 maggio 2023", MAY_3_2023)

# --- Portuguese ---------------------------------------------------------------------------------
add("pt", "O que eu fiz ontem?", YESTERDAY)
add("pt", "O que aconteceu na semana passada?", LAST_WEEK)
add("pt", "no mês passado", LAST_MONTH)
add("pt", "o ano passado", LAST_YEAR)
add("pt", "há 3 dias", THREE_DAYS_AGO)
add("pt", "3 dias atrás", THREE_DAYS_AGO)
add("pt", "há duas semanas", TWO_WEEKS_AGO)
add("pt", "em maio de 2023", MAY_2023)
add("pt", "em 2020", year(2020))
add("pt", "hoje", TODAY)
add("pt", "há três meses", THREE_MONTHS_AGO)
add("pt", "o verão passado", LAST_SUMMER)
add("pt", "no dia 3 de maio de 2023", MAY_3_2023)

# --- Russian ------------------------------------------------------------------------------------
add("ru", "Что я делал вчера?", YESTERDAY)
add("ru", "на прошлой неделе", LAST_WEEK)
add("ru", "в прошлом месяце", LAST_MONTH)
add("ru", "Что Алиса делала в прошлом году?", LAST_YEAR)
add("ru", "3 дня назад", THREE_DAYS_AGO)
add("ru", "две недели назад", TWO_WEEKS_AGO)
add("ru", "в мае 2023 года", MAY_2023)
add("ru", "в 2021 году", year(2021))
add("ru", "сегодня", TODAY)
add("ru", "месяц назад", LAST_MONTH)
add("ru", "на этой неделе", THIS_WEEK)
add("ru", "прошлым летом", LAST_SUMMER)
add("ru", "3 мая 2023", MAY_3_2023)
add("ru", "с января", SINCE_JANUARY)

# --- Chinese ------------------------------------------------------------------------------------
add("zh", "我昨天做了什么", YESTERDAY)
add("zh", "上周我们讨论了什么", LAST_WEEK)
add("zh", "上个月", LAST_MONTH)
add("zh", "爱丽丝去年做了什么", LAST_YEAR)
add("zh", "三天前", THREE_DAYS_AGO)
add("zh", "两周前", TWO_WEEKS_AGO)
add("zh", "2023年5月发生了什么", MAY_2023)
add("zh", "2022年", year(2022))
add("zh", "今天", TODAY)
add("zh", "3个月前", THREE_MONTHS_AGO)
add("zh", "去年夏天", LAST_SUMMER)
add("zh", "2023年5月3日", MAY_3_2023)
add("zh", "最近有什么新闻", RECENTLY)
add("zh", "第三季度", W("2023-07-01", "2023-09-30", "quarter"))
add("zh", "今年上半年", W("2024-01-01", "2024-06-30", "half"))

# --- Japanese -----------------------------------------------------------------------------------
add("ja", "昨日何をしましたか", YESTERDAY)
add("ja", "先週", LAST_WEEK)
add("ja", "先月の会議", LAST_MONTH)
add("ja", "去年", LAST_YEAR)
add("ja", "3日前", THREE_DAYS_AGO)
add("ja", "2週間前", TWO_WEEKS_AGO)
add("ja", "2023年5月", MAY_2023)
add("ja", "2021年に何がありましたか", year(2021))
add("ja", "今日", TODAY)
add("ja", "3ヶ月前", THREE_MONTHS_AGO)
add("ja", "今週", THIS_WEEK)
add("ja", "去年の夏", LAST_SUMMER)
add("ja", "月曜日に何をしましたか", LAST_MONDAY)

# --- Korean -------------------------------------------------------------------------------------
add("ko", "어제 뭐 했어?", YESTERDAY)
add("ko", "지난주에 무엇을 했나요", LAST_WEEK)
add("ko", "지난달", LAST_MONTH)
add("ko", "작년에 무슨 일이 있었나요", LAST_YEAR)
add("ko", "3일 전", THREE_DAYS_AGO)
add("ko", "2주 전", TWO_WEEKS_AGO)
add("ko", "2023년 5월", MAY_2023)
add("ko", "2022년에", year(2022))
add("ko", "오늘", TODAY)
add("ko", "3개월 전", THREE_MONTHS_AGO)
add("ko", "이번 주", THIS_WEEK)
add("ko", "작년 여름", LAST_SUMMER)
add("ko", "2023년 5월 3일", MAY_3_2023)
add("ko", "최근", RECENTLY)

# --- no window: numbers that are not dates, words that look like dates, identifiers ---------------
for q in [
    "Where does Alice work?",
    "When did Carol move to Berlin?",
    "tell me about the meeting",
    "port 8080 is open",
    "What is the status of ticket 2024?",
    "Upgrade to Python 3.11",
    "version 2.0.1 release notes",
    "We have 7 people on the team",
    "top 10 restaurants in Berlin",
    "Call me at 555-123-4567",
    "Alice's phone is +1 415 555 2671",
    "the server at 192.168.1.10",
    "Open localhost:3000",
    "Visit https://example.com/2023/05/report",
    "Send it to alice2023@example.com",
    "the report_2023.pdf file",
    "commit a1b2c3d4",
    "We sold 2000 units",
    "2023 users signed up",
    "Windows 2000 compatibility",
    "Room 1204",
    "error code 404",
    "Chapter 11 summary",
    "run 12 tests",
    "price is $2023",
    "What's 20% of 150?",
    "set the timeout to 30s",
    "the 3D model",
    "the v2 API",
    "Is 1984 a good book?",
    "We planted 1999 trees",
    "who won game 7",
    "the 5th floor",
    "May I ask about the project?",
    "I may go to the gym",
    "We need to march forward",
    "What did June say about the budget?",
    "April is my sister",
    "Who is August Rodin?",
    "Jan said hi",
    "the spring boot application",
    "Spring is a Java framework",
    "the fall of Rome",
    "don't fall asleep",
    "Mars rover findings",
    "we are here",
    "Did we discuss the sun and the moon?",
    "What's the second step?",
    "wait a second",
    "She is in her 30s",
    "Have we met before?",
    "After all, what is the plan?",
    "Since you asked, what's the plan?",
    "Since Alice is out, who covers her tasks?",
    "what's the best book?",
    "How many days are in a week?",
    "What day is it?",
    "what is the next step",
    "the last time we spoke",
    "This is a one-day event",
    "What did Alice say about the weekly report?",
    "I'm late for the meeting",
    "what's the latest news",
    "the most recent version",
    "Is the café open on weekends?",
    "Monday.com integration",
    "what do we know about Q-learning",
    "In 5 minutes I will explain",
    "a 24-hour diner",
    "¿Dónde trabaja Alice?",
    "Wo arbeitet Alice?",
    "Was ist hier passiert?",
    "Où travaille Alice ?",
    "Dove lavora Alice?",
    "Onde a Alice trabalha?",
    "Где работает Алиса?",
    "阿丽丝在哪里工作？",
    "最近的餐厅在哪里",
    "アリスはどこで働いていますか",
    "앨리스는 어디에서 일해요?",
    "O que fiz na segunda vez?",
    "the h1 tag is missing",
    "What is the sum of 2000 and 24?",
    "Who is May Parker?",
    "What does Dr. April Smith recommend?",
    "Tell me about Mayday Parade",
    "Who is Summer's brother?",
    "What's the story with the fall of the Berlin Wall?",
    "What time is the standup?",
    "When is the next release?",
    "We meet every Monday",
    "Chinese New Year traditions",
    "the FY2023 budget",
    "I met Alice a while ago",
    "What is Alice currently working on?",
    "the call at 3pm",
    "book a table for 7pm",
]:
    none(q)
none("What happened in May?", ref=ref("2024-06-15"), languages=("fr",))
