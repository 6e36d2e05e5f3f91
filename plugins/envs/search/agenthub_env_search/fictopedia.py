"""Fictopedia: an encyclopedia of fictional entities and multi-hop questions over it, made from a seed.

No QA data set can be downloaded where this runs, so the default corpus is generated: countries,
cities, people, organisations and works whose articles link to each other through attributes
(born in, founded by, published by, ...). Names are drawn from small pools on purpose, so many
entities share a name and only the qualifier in the title ("Ilsa Varn (architect)") tells them
apart: a question names its start entity exactly, and each further hop must be searched for.
Output is in the FlashRAG formats: passages ``{"id", "contents"}`` with the title on the first
line of ``contents``, questions ``{"id", "question", "golden_answers", "metadata"}``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Bump when the output for a given seed changes: it names the cache directory.
GENERATOR_VERSION = 2

_FIRST = [
    "Ada",
    "Alaric",
    "Bren",
    "Cato",
    "Dara",
    "Edda",
    "Fenn",
    "Galen",
    "Hale",
    "Ilsa",
    "Ivo",
    "Jora",
    "Kael",
    "Lene",
    "Lior",
    "Mara",
    "Nils",
    "Oda",
    "Perrin",
    "Quill",
    "Rhea",
    "Soren",
    "Tamsin",
    "Ulla",
    "Vero",
    "Wren",
    "Yara",
    "Zed",
    "Anselm",
    "Brisa",
    "Corin",
    "Delphine",
    "Emrys",
    "Faye",
    "Gideon",
    "Hester",
    "Isolde",
    "Jasper",
    "Katya",
    "Linus",
    "Maren",
    "Niamh",
    "Osric",
    "Pella",
    "Rurik",
    "Sabine",
    "Teodor",
    "Una",
    "Vesna",
    "Willem",
]
_LAST = [
    "Varn",
    "Holloway",
    "Quist",
    "Marrow",
    "Ostrander",
    "Pell",
    "Thorne",
    "Vance",
    "Whitlock",
    "Ashgrove",
    "Brandt",
    "Corvale",
    "Dunmore",
    "Ebberly",
    "Falkner",
    "Greaves",
    "Harrow",
    "Ingram",
    "Jessop",
    "Kestrel",
    "Lockhart",
    "Merriden",
    "Norcott",
    "Oakes",
    "Penhallow",
    "Quarry",
    "Redfern",
    "Stroud",
    "Tolliver",
    "Underhill",
    "Voss",
    "Wexley",
    "Yarrow",
    "Zell",
    "Abernath",
    "Blythe",
    "Carrow",
    "Dray",
    "Elston",
    "Fairweather",
    "Gault",
    "Hask",
    "Illing",
    "Jory",
    "Kendrick",
    "Larch",
    "Mallory",
    "Nye",
    "Orme",
    "Prewitt",
]
_OCCUPATIONS = [
    "architect",
    "painter",
    "novelist",
    "composer",
    "physician",
    "astronomer",
    "cartographer",
    "engineer",
    "poet",
    "sculptor",
    "botanist",
    "historian",
    "chemist",
    "playwright",
    "photographer",
    "mathematician",
    "diplomat",
    "economist",
    "geologist",
    "linguist",
]
_SYLLABLES = (
    [
        "ka",
        "lo",
        "ven",
        "mar",
        "tel",
        "sor",
        "ri",
        "an",
        "bel",
        "dor",
        "ith",
        "qua",
        "nes",
        "ul",
        "vo",
        "ra",
        "zen",
        "mir",
        "fal",
        "keth",
        "os",
        "ber",
        "lun",
        "gar",
    ],
    ["an", "el", "or", "is", "ath", "und", "ev", "ir", "om", "ar"],
    ["ia", "ton", "mouth", "heim", "grad", "vale", "ford", "more", "stead", "wick"],
)
_INDUSTRIES = [
    "shipping company",
    "publishing house",
    "bank",
    "railway company",
    "brewery",
    "observatory",
    "university",
    "theatre company",
    "record label",
    "newspaper",
    "shipyard",
    "trading house",
]
_ORG_WORDS = [
    "Amber",
    "Northern",
    "Crown",
    "Silver",
    "Harbour",
    "Meridian",
    "Lantern",
    "Granite",
    "Cobalt",
    "Saffron",
    "Summit",
    "Tidewater",
    "Ember",
    "Willow",
    "Iron",
    "Beacon",
    "Falcon",
    "Orchard",
    "Vesper",
    "Juniper",
]
_WORK_KINDS = ["novel", "painting", "symphony", "opera", "atlas", "poem cycle", "treatise", "album", "play", "film"]
_WORK_ADJ = [
    "Gray",
    "Silent",
    "Burning",
    "Hollow",
    "Distant",
    "Crimson",
    "Patient",
    "Broken",
    "Golden",
    "Winter",
    "Sleeping",
    "Last",
    "Quiet",
    "Glass",
    "Hidden",
    "Restless",
    "Pale",
    "Drowned",
    "Northern",
    "Lost",
]
_WORK_NOUN = [
    "Tides",
    "Orchard",
    "Lantern",
    "Meridian",
    "Harbour",
    "Archive",
    "Garden",
    "Cathedral",
    "Shore",
    "Comet",
    "Lighthouse",
    "Mirror",
    "River",
    "Engine",
    "Fields",
    "Mountains",
    "Choir",
    "Pilgrim",
    "Frontier",
    "Ledger",
]

# relation -> (subject kind, object kind, noun phrase for questions). The phrase wraps the phrase of the
# entity it starts from, so chains compose: "the founder of the organisation that published the novel X".
RELATIONS: dict[str, tuple[str, str, str]] = {
    "country": ("city", "country", "the country that {x} lies in"),
    "mayor": ("city", "person", "the mayor of {x}"),
    "capital": ("country", "city", "the capital of {x}"),
    "born_in": ("person", "city", "the city where {x} was born"),
    "employer": ("person", "org", "the organisation that employed {x}"),
    "headquarters": ("org", "city", "the city where {x} has its headquarters"),
    "founder": ("org", "person", "the founder of {x}"),
    "creator": ("work", "person", "the creator of {x}"),
    "publisher": ("work", "org", "the organisation that published {x}"),
}
_BY_KIND: dict[str, list[str]] = {}
for _rel, (_subject, _obj, _np) in RELATIONS.items():
    _BY_KIND.setdefault(_subject, []).append(_rel)


@dataclass
class Entity:
    index: int
    kind: str
    name: str
    qualifier: str
    what: str  # how a question introduces it: "the architect", "the novel"
    links: dict[str, int] = field(default_factory=dict)
    year: int = 0
    extra: list[int] = field(default_factory=list)  # unrelated mentions: the noise real articles carry

    @property
    def title(self) -> str:
        return f"{self.name} ({self.qualifier})" if self.qualifier else self.name

    def mention(self) -> str:
        return f"{self.what} {self.name}" + (f" ({self.qualifier})" if self.kind == "city" else "")


@dataclass
class Fictopedia:
    entities: list[Entity]
    questions: dict[str, list[dict[str, Any]]]


def _unique(rng: random.Random, taken: set[str], make: Any) -> tuple[str, str]:
    for _ in range(1000):
        name, qualifier = make()
        key = f"{name}|{qualifier}"
        if key not in taken:
            taken.add(key)
            return name, qualifier
    raise RuntimeError("fictopedia ran out of distinct names; lower the entity counts")


def _work_title(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"The {rng.choice(_WORK_ADJ)} {rng.choice(_WORK_NOUN)}"
    return f"{rng.choice(_WORK_NOUN)} of the {rng.choice(_WORK_ADJ)} {rng.choice(_WORK_NOUN)}"


def generate(
    seed: int = 0,
    *,
    countries: int = 30,
    cities: int = 3000,
    people: int = 12000,
    orgs: int = 3000,
    works: int = 7000,
    train_questions: int = 4000,
    test_questions: int = 1000,
) -> Fictopedia:
    """The whole encyclopedia and its questions; the same arguments always give the same output."""
    rng = random.Random(seed)
    ents: list[Entity] = []
    taken: set[str] = set()

    def add(kind: str, name: str, qualifier: str, what: str) -> Entity:
        ent = Entity(len(ents), kind, name, qualifier, what, year=rng.randrange(1620, 1990))
        ents.append(ent)
        return ent

    def place_name() -> str:
        return "".join(rng.choice(pool) for pool in _SYLLABLES).capitalize()

    country_list = [
        add("country", *_unique(rng, taken, lambda: (place_name(), "")), "the country") for _ in range(countries)
    ]
    city_list = []
    for _ in range(cities):
        country = rng.choice(country_list)
        # Cities are qualified by their country: the same city name recurs across countries.
        name, _q = _unique(rng, taken, lambda c=country: (place_name(), c.name))
        city = add("city", name, _q, "the city of")
        city.links["country"] = country.index
        city_list.append(city)
    for country in country_list:
        own = [c for c in city_list if c.links["country"] == country.index] or city_list
        country.links["capital"] = rng.choice(own).index
    person_list = []
    for _ in range(people):
        occupation = rng.choice(_OCCUPATIONS)
        name, q = _unique(rng, taken, lambda o=occupation: (f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", o))
        person_list.append(add("person", name, q, f"the {q}"))
    org_list = []
    for _ in range(orgs):
        industry = rng.choice(_INDUSTRIES)
        name, q = _unique(
            rng, taken, lambda i=industry: (f"{rng.choice(_ORG_WORDS)} {rng.choice(_LAST)} {rng.choice(_ORG_WORDS)}", i)
        )
        org_list.append(add("org", name, q, f"the {q}"))
    work_list = []
    for _ in range(works):
        work_kind = rng.choice(_WORK_KINDS)
        name, q = _unique(rng, taken, lambda k=work_kind: (_work_title(rng), k))
        work_list.append(add("work", name, q, f"the {q}"))
    for city in city_list:
        city.links["mayor"] = rng.choice(person_list).index
    for person in person_list:
        person.links["born_in"] = rng.choice(city_list).index
        person.links["employer"] = rng.choice(org_list).index
    for org in org_list:
        org.links["headquarters"] = rng.choice(city_list).index
        org.links["founder"] = rng.choice(person_list).index
    for work in work_list:
        work.links["creator"] = rng.choice(person_list).index
        work.links["publisher"] = rng.choice(org_list).index
    for ent in ents:
        ent.extra = [rng.randrange(len(ents)) for _ in range(2)]
    questions = _questions(rng, ents, train_questions + test_questions)
    return Fictopedia(ents, {"train": questions[:train_questions], "test": questions[train_questions:]})


def _questions(rng: random.Random, ents: list[Entity], count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < count:
        hops = rng.randint(1, 4)  # drawn, not cycled: any slice of the ids mixes hop counts
        start = rng.choice(ents)
        chain, relations = [start.index], []
        ok = True
        for _ in range(hops):
            rel = rng.choice(_BY_KIND[ents[chain[-1]].kind])
            nxt = ents[chain[-1]].links[rel]
            if nxt in chain:
                ok = False
                break
            chain.append(nxt)
            relations.append(rel)
        if not ok:
            continue
        phrase = start.mention()
        for rel in relations:
            phrase = RELATIONS[rel][2].format(x=phrase)
        question = f"What is the name of {phrase}?"
        if question in seen:
            continue
        seen.add(question)
        answer = ents[chain[-1]]
        out.append(
            {
                "question": question,
                "golden_answers": [answer.name, answer.title] if answer.qualifier else [answer.name],
                # The gold chain: what the oracle searches for, hop by hop.
                "metadata": {"hops": hops, "relations": relations, "chain": [ents[i].title for i in chain]},
            }
        )
    return out


def article(ent: Entity, ents: list[Entity]) -> str:
    """The entity's article as prose; linked entities are written as their titles, as a wiki links them."""

    def t(rel: str) -> str:
        return ents[ent.links[rel]].title

    other = [ents[i].title for i in ent.extra]
    if ent.kind == "country":
        return (
            f"{ent.name} is a country whose capital is {t('capital')}. Its first charter dates from {ent.year}. "
            f"Its chronicles mention {other[0]} and {other[1]}."
        )
    if ent.kind == "city":
        return (
            f"{ent.name} is a city in {t('country')}, first recorded in {ent.year}. "
            f"Its mayor is {t('mayor')}. Travellers often compare it with {other[0]}."
        )
    if ent.kind == "person":
        return (
            f"{ent.name} is a {ent.qualifier}, born in {t('born_in')} in {ent.year}. "
            f"{ent.name} worked for {t('employer')} and corresponded with {other[0]}. "
            f"Critics have linked the work of {ent.name} to {other[1]}."
        )
    if ent.kind == "org":
        return (
            f"{ent.name} is a {ent.qualifier} founded by {t('founder')} in {ent.year}. "
            f"It has its headquarters in {t('headquarters')}. It once had dealings with {other[0]}."
        )
    return (
        f"{ent.name} is a {ent.qualifier} created by {t('creator')} in {ent.year}. "
        f"It was published by {t('publisher')}. Reviewers have compared it with {other[0]}."
    )


def write(book: Fictopedia, directory: Path) -> None:
    """``corpus.jsonl``, ``train.jsonl`` and ``test.jsonl`` in the FlashRAG formats."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for ent in book.entities:
            f.write(
                json.dumps({"id": str(ent.index), "contents": f"{ent.title}\n{article(ent, book.entities)}"}) + "\n"
            )
    for split, rows in book.questions.items():
        with (directory / f"{split}.jsonl").open("w", encoding="utf-8") as f:
            for i, row in enumerate(rows):
                f.write(json.dumps({"id": f"{split}_{i}", **row}) + "\n")
