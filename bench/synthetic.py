"""Deterministic synthetic memory banks: realistic sentences about people, places, organisations and dates.

Fact ``i`` depends only on ``(GENERATOR_VERSION, seed, i)``, never on the bank size,
so a bank of 10,000 facts is exactly the first 10,000 facts of the 100,000 one and
the embedding cache (``bench.embcache``) can be shared between sizes chunk by chunk.

The pools of people and organisations grow with the fact index (about
``FACTS_PER_PERSON`` facts per person at any size), so a bigger bank has more
people, not just more facts about the same few: entity fan-out, and so the graph
strategy's work per query, stays realistic as the bank grows. Each fact names its
entities explicitly (the generator knows them), so ingest needs no NER.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

GENERATOR_VERSION = 1
DEFAULT_SEED = 7
FACTS_PER_PERSON = 20
FACTS_PER_ORG = 100

FIRST = (
    "Alice Aarav Abebe Adaeze Ahmed Aiko Alejandro Amara Amelia Ana Andrei Anika Arjun Astrid Ayesha Beatriz Bilal "
    "Bjorn Bongani Camila Carlos Chen Chiara Chloe Dalia Daniel Darius Dmitri Eamon Elena Elif Emeka Emil Emma "
    "Esra Ethan Fatima Felix Fernando Fiona Freya Gabriel Giulia Grace Hana Hannah Hassan Helga Hiroshi Ibrahim "
    "Ikaika Ines Ingrid Isabel Ivan Jamal James Javier Jia Joao Jonas Jorge Julia Kaito Kamala Karim Kasia Kenji "
    "Kofi Lars Layla Leila Leon Liam Lina Luca Lucia Magnus Maya Mei Mateo Mia Miguel Mina Mohammed Nadia Nia Nikolai "
    "Noah Noor Olga Olivia Omar Oscar Pablo Paolo Priya Rafael Rahul Rania Ravi Rosa Ruth Sakura Samir Santiago Sara "
    "Sean Sofia Soren Sunita Tariq Thandiwe Theo Tomas Uma Valentina Victor Wei Yara Yusuf Zainab Zara Zoe Anders "
    "Beatrix Cormac Delphine Everett Farah Gideon Henrike Idris Jolene Kwame Lorenzo Marisol Nkechi Orla Pedro "
    "Quentin Rosalind Siddharth Tove Ulrich Vesna Wendell Ximena Yosef Zofia"
).split()
LAST = (
    "Abara Adeyemi Alvarez Andersen Bakshi Baptiste Becker Bianchi Brennan Castillo Chen Costa Dahl Dubois Dumont "
    "Eriksen Esposito Farouk Fischer Fontaine Garcia Gonzaga Gupta Haddad Hansen Hartmann Hoffmann Horvath Ibsen "
    "Ivanova Jensen Jovanovic Kahn Kapoor Kato Keller Kim Kowalski Kuznetsov Larsen Laurent Lee Lindqvist Lopez "
    "Marchetti Martins Mehta Meyer Moreau Morales Murphy Nakamura Nguyen Novak Nowak Okafor Okonkwo Olsen Ortiz "
    "Papadopoulos Park Patel Pereira Petrov Quinn Rahman Ramos Reyes Ricci Rossi Russo Saito Santos Sato Schmidt "
    "Schneider Silva Singh Sokolov Suzuki Takahashi Tanaka Torres Tran Varga Vasquez Volkov Wagner Walsh Weber "
    "Wojcik Yamamoto Yilmaz Zhang Zhou Zielinski Achterberg Bergstrom Carvalho Delacroix Engstrom Fitzgerald "
    "Galloway Hakimi Iwasaki Jablonski Kaminski Lindgren Mwangi Nordin Oyelaran Pacheco Rasmussen Szabo Thorsen "
    "Umarov Valdez Whitfield Xiong Yamada Zapata"
).split()
CITIES = (
    (
        "Lisbon Porto Madrid Barcelona Valencia Seville Paris Lyon Marseille Bordeaux Brussels Antwerp Amsterdam "
        "Rotterdam Utrecht Berlin Hamburg Munich Cologne Leipzig Vienna Salzburg Zurich Geneva Basel Milan Rome Naples "
        "Turin Florence Bologna Athens Thessaloniki Istanbul Ankara Warsaw Krakow Gdansk Prague Brno Budapest Bucharest "
        "Sofia Belgrade Zagreb Ljubljana Copenhagen Aarhus Oslo Bergen Stockholm Gothenburg Helsinki Tallinn Riga "
        "Vilnius Dublin Cork Edinburgh Glasgow Manchester Leeds Bristol London Reykjavik Toronto Montreal Vancouver "
        "Calgary Chicago Boston Seattle Denver Austin Atlanta Miami Phoenix Portland Minneapolis Mexico_City Guadalajara "
        "Bogota Medellin Lima Quito Santiago Buenos_Aires Montevideo Sao_Paulo Rio_de_Janeiro Recife Lagos Accra Nairobi "
        "Kampala Addis_Ababa Cairo Casablanca Tunis Johannesburg Cape_Town Durban Dubai Doha Amman Beirut Karachi Lahore "
        "Mumbai Pune Bangalore Chennai Kolkata Delhi Dhaka Kathmandu Colombo Bangkok Hanoi Manila Jakarta Singapore "
        "Kuala_Lumpur Seoul Busan Tokyo Osaka Kyoto Sapporo Taipei Shanghai Beijing Shenzhen Sydney Melbourne Brisbane "
        "Perth Auckland Wellington Honolulu"
    )
    .replace("_", "\x00")
    .split()
)
CITIES = tuple(c.replace("\x00", " ") for c in CITIES)
ORG_HEAD = (
    "Northwind Bluefield Redwood Silverline Brightwater Ironbridge Clearpath Stonegate Greenleaf Highmark Lakeshore "
    "Evergreen Crescent Summit Harbor Pinecrest Westbrook Eastgate Sunridge Oakhurst Riverside Starling Meridian "
    "Cobalt Juniper Aurora Granite Falcon Cedar Horizon Beacon Atlas Orion Vega Kestrel Willow Maple Copper Amber "
    "Sterling Tidewater Foxglove Halcyon Larkspur Marigold Nimbus Quarry Saffron Thistle Zephyr"
).split()
ORG_TAIL = (
    "Labs|Hospital|Bank|Logistics|Studios|Analytics|Robotics|Foods|Pharmaceuticals|Energy|Insurance|Architects|"
    "Publishing|Airlines|Textiles|Software|Biotech|Capital|Consulting|University|Museum|Orchestra|Theatre|"
    "Football Club|Bakery|Brewery|Law Firm|Design Studio|Research Institute|Shipping"
).split("|")
ROLES = (
    "data engineer|nurse|product manager|architect|teacher|accountant|chef|pilot|software developer|researcher|"
    "lawyer|designer|pharmacist|translator|electrician|marketing lead|curator|violinist|paramedic|journalist|"
    "civil engineer|veterinarian|sales director|photographer|statistician"
).split("|")
HOBBIES = (
    "rock climbing|sourdough baking|watercolour painting|trail running|chess|birdwatching|salsa dancing|pottery|"
    "woodworking|sailing|beekeeping|knitting|astronomy|urban gardening|kayaking|jazz piano|calligraphy|"
    "fly fishing|board games|photography|cycling|yoga|scuba diving|bouldering|choir singing"
).split("|")
PETS = "dog|cat|parrot|rabbit|tortoise|horse|hamster|ferret|goldfish|greyhound".split("|")
PET_NAMES = (
    "Biscuit Luna Pepper Mochi Rocket Olive Shadow Ziggy Maple Nugget Pixel Juniper Clementine Bruno Tofu".split()
)
EVENTS = (
    "a jazz festival|a marathon|a tech conference|a wedding|a book fair|a film premiere|a charity gala|"
    "a science fair|a chess tournament|a food market|a climate summit|an art exhibition|a hackathon|a reunion"
).split("|")
THINGS = (
    "a used Volvo|an electric bike|a sailboat|a vintage piano|a small apartment|a cabin by a lake|a telescope|"
    "a food truck|a vineyard plot|a pottery kiln|a camper van|a 3D printer"
).split("|")
MONTHS = ("January February March April May June July August September October November December").split()

# (template, needs) - the template's slots are filled by _fill; each names the facts' entities.
TEMPLATES: tuple[str, ...] = (
    "{p} moved to {city} in {month} {year} to start a new job as a {role}.",
    "{p} started working at {org} as a {role} on {date}.",
    "{p} left {org} after {n} years and joined {org2} in {city}.",
    "{p} and {p2} met at {event} in {city} in {month} {year}.",
    "{p} adopted a {pet} named {petname} while living in {city}.",
    "{p} took up {hobby} in {year} and practises it every weekend.",
    "{p} ran the {city} marathon in {n} hours and {m} minutes on {date}.",
    "{org} opened a new office in {city} in {month} {year}, led by {p}.",
    "{p} was promoted to senior {role} at {org} on {date}.",
    "{p} bought {thing} in {city} for {price} euros in {year}.",
    "{p} graduated from {org} with a degree in {subject} in {year}.",
    "{p} visited {p2} in {city} for {n} days in {month} {year}.",
    "{p} gave a talk about {subject} at {org} on {date}.",
    "{p} married {p2} in {city} on {date}.",
    "{p} broke an arm while {hobby} near {city} in {month} {year}.",
    "{p} volunteered at {event} organised by {org} on {date}.",
    "{p} told {p2} that {org} is hiring {role}s in {city}.",
    "{p} and {p2} founded {org} in {city} in {year}.",
    "{p} spent the summer of {year} in {city} learning {language}.",
    "{p} sold {thing} to {p2} in {month} {year}.",
    "{p} won a prize for {hobby} in {city} on {date}.",
    "{p} recommended the restaurant {petname}'s Kitchen in {city} to {p2}.",
    "{p} moved from {city} to {city2} in {month} {year} with a {pet} named {petname}.",
    "{p} signed a contract with {org} worth {price} euros on {date}.",
)
SUBJECTS = (
    "machine learning|marine biology|medieval history|urban planning|renewable energy|public health|economics|"
    "music theory|structural engineering|linguistics|climate science|graphic design|nutrition|robotics"
).split("|")
LANGUAGES = "Portuguese|Japanese|Arabic|Swahili|Italian|Korean|Spanish|German|Mandarin|Finnish|Greek|Hindi".split("|")

DATE_START = datetime(2010, 1, 1, tzinfo=UTC)
DATE_DAYS = 16 * 365


def person_name(k: int) -> str:
    """The k-th person: unique for every k (first x last, then with a middle initial)."""
    f, rest = k % len(FIRST), k // len(FIRST)
    last = LAST[(rest + k) % len(LAST)]
    if rest < len(LAST):
        return f"{FIRST[f]} {last}"
    return f"{FIRST[f]} {chr(65 + (rest // len(LAST)) % 26)}. {last}"


def org_name(k: int) -> str:
    h, rest = k % len(ORG_HEAD), k // len(ORG_HEAD)
    name = f"{ORG_HEAD[h]} {ORG_TAIL[(rest + 3 * h) % len(ORG_TAIL)]}"
    return name if rest < len(ORG_TAIL) else f"{name} {rest // len(ORG_TAIL) + 1}"


def people_in(n: int) -> int:
    """How many distinct people a bank of n facts draws from."""
    return max(50, n // FACTS_PER_PERSON)


def orgs_in(n: int) -> int:
    return max(20, n // FACTS_PER_ORG)


def _rng(seed: int, kind: str, i: int) -> random.Random:
    return random.Random(f"tempr-bench:{GENERATOR_VERSION}:{seed}:{kind}:{i}")


def fact(i: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Fact i as a JSON-able dict in tempr's ingest shape (entities given, dated)."""
    rng = _rng(seed, "fact", i)
    pool_p, pool_o = people_in(i + 1), orgs_in(i + 1)

    # Half the mentions go to the newest people so every person gets facts, half anywhere.
    def pick_person() -> int:
        return rng.randrange(max(0, pool_p - 50), pool_p) if rng.random() < 0.3 else rng.randrange(pool_p)

    p, p2 = pick_person(), pick_person()
    if p2 == p:
        p2 = (p + 1) % pool_p
    when = DATE_START + timedelta(days=rng.randrange(DATE_DAYS), hours=rng.randrange(8, 21))
    slots = {
        "p": person_name(p),
        "p2": person_name(p2),
        "org": org_name(rng.randrange(pool_o)),
        "org2": org_name(rng.randrange(pool_o)),
        "city": rng.choice(CITIES),
        "city2": rng.choice(CITIES),
        "role": rng.choice(ROLES),
        "hobby": rng.choice(HOBBIES),
        "pet": rng.choice(PETS),
        "petname": rng.choice(PET_NAMES),
        "event": rng.choice(EVENTS),
        "thing": rng.choice(THINGS),
        "subject": rng.choice(SUBJECTS),
        "language": rng.choice(LANGUAGES),
        "n": rng.randrange(2, 12),
        "m": rng.randrange(0, 60),
        "price": f"{rng.randrange(2, 900) * 100:,}",
        "month": MONTHS[when.month - 1],
        "year": when.year,
        "date": f"{when.day} {MONTHS[when.month - 1]} {when.year}",
    }
    template = TEMPLATES[rng.randrange(len(TEMPLATES))]
    text = template.format(**slots)
    entities = [slots[k] for k in ("p", "p2", "org", "org2", "city", "city2") if "{" + k + "}" in template]
    mentioned = when + timedelta(days=rng.randrange(0, 30))
    return {
        "id": f"syn-{i}",
        "text": text,
        "fact_type": rng.choice(("world", "world", "experience")),
        "occurred_start": when.isoformat(),
        "occurred_end": when.isoformat(),
        "mentioned_at": mentioned.isoformat(),
        "entities": list(dict.fromkeys(str(e) for e in entities)),
        "document_id": f"doc-{i // 50}",
        "metadata": {"generator": f"v{GENERATOR_VERSION}", "index": str(i)},
    }


def facts(n: int, seed: int = DEFAULT_SEED, start: int = 0) -> Iterator[dict[str, Any]]:
    for i in range(start, n):
        yield fact(i, seed)


QUERY_TEMPLATES: tuple[str, ...] = (
    "Where did {p} move to?",
    "When did {p} start working at {org}?",
    "What happened in {city} in {year}?",
    "Who did {p} meet in {city}?",
    "What did {p} do in {month} {year}?",
    "Which people work at {org}?",
    "What hobbies does {p} have?",
    "Did {p} own any pets?",
    "Who founded {org}?",
    "What did {p} buy last year?",
    "Who visited {city} in the summer of {year}?",
    "What does {p} know about {subject}?",
)


def query(j: int, n: int, seed: int = DEFAULT_SEED) -> str:
    """Query j for a bank of n facts: about people and organisations that bank holds."""
    rng = _rng(seed, f"query:{n}", j)
    when = DATE_START + timedelta(days=rng.randrange(DATE_DAYS))
    slots = {
        "p": person_name(rng.randrange(people_in(n))),
        "org": org_name(rng.randrange(orgs_in(n))),
        "city": rng.choice(CITIES),
        "year": when.year,
        "month": MONTHS[when.month - 1],
        "subject": rng.choice(SUBJECTS),
    }
    return QUERY_TEMPLATES[rng.randrange(len(QUERY_TEMPLATES))].format(**slots)


def queries(count: int, n: int, seed: int = DEFAULT_SEED, start: int = 0) -> list[str]:
    return [query(j, n, seed) for j in range(start, start + count)]
