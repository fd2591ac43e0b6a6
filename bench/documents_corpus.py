"""bench/documents.py's corpus: documents of every common kind with facts on known pages, and the
questions about them, made the same way from the same seed every time.

- 250 made-up projects ("the Veltrano project"), each with four of the 16 ATTRIBUTES (its budget,
  its deadline, who leads it…; each in one of two phrasings) stated once, each on another page of
  another document: a question about a project's deadline has to find the deadline's page, not
  any of the four that name it. Projects are also named in passing in filler sentences elsewhere
  (about one paragraph in three names one).
- Documents of seven kinds, each made by its own library: PDF (fpdf2, a fact's page is a PDF
  page), PPTX (a slide), XLSX (a sheet), DOCX, HTML and Markdown (a section under a heading), and
  plain text (the document itself: it has no pages).
- One question per fact (1,000 by default): 30% use the fact's own words ("What is the approved
  budget of the Veltrano project?"), 70% a paraphrase sharing only the project's name ("How much
  money was set aside for Veltrano?"). 100 questions have no answer anywhere: half ask about
  projects that do not exist, half about an attribute the project never states.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

KINDS = ["pdf", "pptx", "xlsx", "docx", "html", "md", "txt"]
SHARE = {"pdf": 0.25, "pptx": 0.12, "xlsx": 0.12, "docx": 0.16, "html": 0.12, "md": 0.13, "txt": 0.10}
UNITS = {
    "pdf": (3, 8),
    "pptx": (3, 8),
    "xlsx": (2, 4),
    "docx": (3, 6),
    "html": (3, 6),
    "md": (3, 6),
    "txt": (1, 1),
}

SYLLABLES = [
    "ka",
    "lo",
    "ver",
    "tan",
    "mi",
    "dor",
    "qua",
    "zel",
    "bri",
    "on",
    "sa",
    "fen",
    "ri",
    "mo",
    "nax",
    "tel",
    "vo",
    "gru",
    "pim",
    "ae",
    "lan",
    "cor",
    "dra",
    "sil",
    "ben",
    "tor",
    "ul",
    "mar",
    "vek",
    "is",
    "pra",
    "nel",
    "ost",
    "rin",
    "ca",
    "fal",
]
FIRST = [
    "Anna",
    "Bruno",
    "Clara",
    "Daniel",
    "Elena",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Karin",
    "Luca",
    "Maya",
    "Nils",
    "Olga",
    "Pavel",
    "Rosa",
    "Samir",
    "Tessa",
    "Ugo",
    "Vera",
    "Walter",
    "Yara",
    "Zoran",
    "Amira",
    "Boris",
    "Chloe",
    "Dmitri",
    "Esme",
    "Felix",
]
CITIES = [
    "Lisbon",
    "Porto",
    "Lyon",
    "Ghent",
    "Utrecht",
    "Malmo",
    "Bergen",
    "Tampere",
    "Graz",
    "Brno",
    "Krakow",
    "Ljubljana",
    "Split",
    "Bari",
    "Seville",
    "Bilbao",
    "Aarhus",
    "Leipzig",
    "Basel",
    "Turin",
    "Riga",
    "Tallinn",
    "Vilnius",
    "Cork",
    "Galway",
    "Bordeaux",
    "Nantes",
]
RISKS = [
    "a shortage of copper cable",
    "late delivery of the cooling units",
    "the departure of two senior engineers",
    "rising interest rates",
    "a pending patent dispute",
    "flooding at the main warehouse",
    "an untested payment provider",
    "strict new emission rules",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass(frozen=True)
class Attribute:
    key: str
    facts: tuple[str, ...]  # how a document states it ({e}: the project, {a}: the answer)
    exact: str  # a question in the fact's own words
    paraphrases: tuple[str, ...]  # questions sharing only the project's name


def _money(rng: random.Random) -> str:
    return f"{rng.randint(12, 980)},{rng.choice(['000', '500'])} euros"


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2027, 2031)}"


ATTRIBUTES = [
    Attribute(
        "budget",
        (
            "The {e} project has an approved budget of {a}.",
            "An approved budget of {a} was granted to the {e} project.",
        ),
        "What is the approved budget of the {e} project?",
        ("How much money was set aside for {e}?", "What funding did {e} receive?"),
    ),
    Attribute(
        "deadline",
        (
            "The final deadline for the {e} project is {a}.",
            "Work on {e} must meet its final deadline of {a}.",
        ),
        "What is the final deadline for the {e} project?",
        ("By when must {e} be completed?", "When is {e} due to be finished?"),
    ),
    Attribute(
        "lead",
        ("{a} leads the {e} team as project manager.", "The {e} team is led by project manager {a}."),
        "Who leads the {e} team as project manager?",
        ("Who is in charge of {e}?", "Which person runs {e}?"),
    ),
    Attribute(
        "office",
        ("The {e} office is located in {a}.", "The office of the {e} project is located in {a}."),
        "Where is the {e} office located?",
        ("In which city is {e} based?", "Where does {e} work from?"),
    ),
    Attribute(
        "supplier",
        ("The {e} project buys its steel from {a}.", "Steel for the {e} project is bought from {a}."),
        "From whom does the {e} project buy its steel?",
        ("Which vendor delivers metal to {e}?", "Who provides the raw materials for {e}?"),
    ),
    Attribute(
        "headcount",
        ("The {e} project employs {a} engineers.", "There are {a} engineers employed on the {e} project."),
        "How many engineers does the {e} project employ?",
        ("How large is the {e} staff?", "How many people work on {e}?"),
    ),
    Attribute(
        "risk",
        ("The main risk for the {e} project is {a}.", "For {e}, the main risk identified is {a}."),
        "What is the main risk for the {e} project?",
        ("What threatens {e} the most?", "What could endanger {e}?"),
    ),
    Attribute(
        "auditor",
        ("The accounts of {e} are audited each year by {a}.", "{a} audits the accounts of {e} every year."),
        "Who audits the accounts of {e}?",
        ("Which firm checks the books of {e}?", "Who reviews the finances of {e} annually?"),
    ),
    Attribute(
        "server",
        ("The {e} database runs on a server called {a}.", "A server named {a} hosts the {e} database."),
        "What is the server called that runs the {e} database?",
        ("On which machine is the data of {e} stored?", "Which host keeps the records of {e}?"),
    ),
    Attribute(
        "insurance",
        ("The {e} warehouse is insured for {a}.", "Insurance for the {e} warehouse covers {a}."),
        "For how much is the {e} warehouse insured?",
        (
            "What is the insured value of the storage building of {e}?",
            "How much cover does the depot of {e} have?",
        ),
    ),
    Attribute(
        "kickoff",
        ("The {e} kickoff meeting took place on {a}.", "On {a} the kickoff meeting of {e} took place."),
        "When did the {e} kickoff meeting take place?",
        ("When did {e} officially start?", "On what day was {e} launched internally?"),
    ),
    Attribute(
        "customer",
        ("The largest customer of {e} is {a}.", "{a} is the largest customer of {e}."),
        "Who is the largest customer of {e}?",
        ("Which client buys the most from {e}?", "Who is the biggest buyer for {e}?"),
    ),
    Attribute(
        "license",
        (
            "The {e} software is released under the {a} license.",
            "{e} publishes its software under the {a} license.",
        ),
        "Under which license is the {e} software released?",
        ("What are the terms for reusing the code of {e}?", "How may others use the programs of {e}?"),
    ),
    Attribute(
        "vehicles",
        ("The {e} fleet counts {a} delivery vans.", "There are {a} delivery vans in the {e} fleet."),
        "How many delivery vans does the {e} fleet count?",
        ("How many trucks does {e} operate?", "What is the size of the vehicle pool of {e}?"),
    ),
    Attribute(
        "language",
        ("All {e} documentation is written in {a}.", "The documentation of {e} is written in {a}."),
        "In which language is the {e} documentation written?",
        ("What language are the manuals of {e} in?", "In what tongue are the guides of {e}?"),
    ),
    Attribute(
        "notice",
        (
            "The {e} contract can be terminated with {a} days of notice.",
            "Either party may terminate the {e} contract with {a} days of notice.",
        ),
        "With how many days of notice can the {e} contract be terminated?",
        ("How long before ending the {e} agreement must one warn?", "How early must one cancel {e}?"),
    ),
]

FILLER = [
    "The committee reviewed the {n} during the {t} meeting and asked for a shorter summary.",
    "Most of the {n} was delivered on time, although the {n2} needed a second inspection.",
    "A new {n} will replace the old {n2} once the tests are complete.",
    "Several teams reported that the {n} works better when the {n2} is checked every week.",
    "The {t} review found no open issues with the {n}.",
    "Costs for the {n} stayed within the plan for the third quarter in a row.",
    "Staff training on the {n2} continues through the {t} sessions.",
    "The {e} team met on {d} to discuss the {n}.",
    "Notes from the {e} workshop mention the {n} and the {n2}.",
    "Visitors to the {e} site were shown the {n}.",
    "Questions about the {n} should be sent to the support desk.",
    "The {n} and the {n2} are documented in the appendix.",
]
NOUNS = [
    "schedule",
    "inventory",
    "roadmap",
    "handbook",
    "dashboard",
    "warehouse",
    "printer",
    "network",
    "survey",
    "archive",
    "contract",
    "invoice",
    "ledger",
    "brochure",
    "prototype",
    "catalogue",
    "forecast",
    "checklist",
    "workflow",
    "timetable",
]
TIMES = ["weekly", "monthly", "quarterly", "annual", "morning", "evening"]
TOPICS = [
    "Overview",
    "Background",
    "Operations",
    "Finance",
    "Staffing",
    "Logistics",
    "Planning",
    "Outlook",
    "Appendix",
    "Summary",
    "Facilities",
    "Procurement",
    "Quality",
    "Training",
    "Safety",
    "Partners",
]


@dataclass
class Fact:
    entity: str
    attribute: Attribute
    answer: str
    text: str
    doc: int = -1
    unit: int = -1


@dataclass
class Question:
    text: str
    fact: Fact | None  # None: the answer is nowhere
    exact: bool = False


@dataclass
class Doc:
    name: str
    kind: str
    units: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading, paragraphs)
    data: bytes = b""

    def target(self, unit: int) -> tuple[str, object] | None:
        """What a hit's place must say for the fact in `unit`: the page, slide, sheet or heading."""
        if self.kind == "pdf":
            return ("page", unit + 1)
        if self.kind == "pptx":
            return ("slide", unit + 1)
        if self.kind == "xlsx":
            return ("sheet", self.units[unit][0])
        if self.kind in ("docx", "html", "md"):
            return ("heading", self.units[unit][0])
        return None  # plain text: the document


def _name(rng: random.Random, taken: set[str]) -> str:
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if word not in taken and len(word) > 4:
            taken.add(word)
            return word


def _answer(attribute: Attribute, rng: random.Random, taken: set[str]) -> str:
    key = attribute.key
    if key == "budget":
        return _money(rng)
    if key == "deadline":
        return _date(rng)
    if key == "lead":
        return f"{rng.choice(FIRST)} {_name(rng, taken)}"
    if key == "office":
        return rng.choice(CITIES)
    if key == "supplier":
        return f"{_name(rng, taken)} Metals"
    if key == "headcount":
        return str(rng.randint(3, 240))
    if key == "risk":
        return rng.choice(RISKS)
    if key == "auditor":
        return f"{_name(rng, taken)} and Partners"
    if key == "server":
        return _name(rng, taken).lower()
    if key == "insurance":
        return _money(rng).replace(",", ".", 1).replace(" euros", " million euros")
    if key == "kickoff":
        return _date(rng)
    if key == "customer":
        return f"{_name(rng, taken)} Retail"
    if key == "license":
        return rng.choice(["Apache 2.0", "MIT", "BSD", "MPL 2.0", "EUPL"])
    if key == "vehicles":
        return str(rng.randint(2, 90))
    if key == "language":
        return rng.choice(["Portuguese", "Dutch", "Finnish", "Czech", "Polish", "Italian", "Swedish"])
    return str(rng.choice([14, 30, 45, 60, 90, 120]))


def _filler(rng: random.Random, entities: list[str], mention: float = 0.3) -> str:
    """A paragraph of 3 to 5 ordinary sentences; a sentence naming a project is kept with
    probability `mention` (about one paragraph in three names one in passing)."""
    sentences = []
    for _ in range(rng.randint(3, 5)):
        nouns = rng.sample(NOUNS, 2)
        template = rng.choice(FILLER)
        while "{e}" in template and rng.random() > mention:
            template = rng.choice(FILLER)
        sentences.append(
            template.format(
                n=nouns[0], n2=nouns[1], t=rng.choice(TIMES), e=rng.choice(entities), d=_date(rng)
            )
        )
    return " ".join(sentences)


@dataclass
class Corpus:
    docs: list[Doc]
    facts: list[Fact]
    questions: list[Question]


def build(seed: int = 43, documents: int = 240, questions: int = 1000, nowhere: int = 100) -> Corpus:
    """The documents (with their bytes), the facts placed in them and the questions."""
    rng = random.Random(seed)
    taken: set[str] = set()
    entities = [_name(rng, taken) for _ in range(max(1, questions // 4))]
    facts: list[Fact] = []
    for entity in entities:
        for attribute in rng.sample(ATTRIBUTES, 4):
            answer = _answer(attribute, rng, taken)
            facts.append(
                Fact(entity, attribute, answer, rng.choice(attribute.facts).format(e=entity, a=answer))
            )
    facts = facts[:questions]
    docs: list[Doc] = []
    counts = {kind: max(1, round(documents * share)) for kind, share in SHARE.items()}
    counts["pdf"] += documents - sum(counts.values())
    for kind in KINDS:
        for n in range(counts[kind]):
            doc = Doc(f"{kind}-{n:03d}-{rng.choice(TOPICS).lower()}.{kind}", kind)
            for u in range(rng.randint(*UNITS[kind])):
                heading = (
                    f"{rng.choice(TOPICS)} {u + 1}" if kind != "xlsx" else f"{rng.choice(TOPICS)}{u + 1}"
                )
                doc.units.append((heading, [_filler(rng, entities) for _ in range(rng.randint(3, 5))]))
            docs.append(doc)
    rng.shuffle(docs)
    slots = [(d, u) for d, doc in enumerate(docs) for u in range(len(doc.units))]
    holding: dict[tuple[int, int], set[str]] = {}
    for fact in facts:  # a unit not holding a fact of the same project
        while True:
            d, u = rng.choice(slots)
            if fact.entity not in holding.setdefault((d, u), set()):
                holding[(d, u)].add(fact.entity)
                break
        paragraphs = docs[d].units[u][1]
        position = rng.randint(0, len(paragraphs))
        paragraphs.insert(position, f"{_filler(rng, entities)} {fact.text} {_filler(rng, entities)}")
        fact.doc, fact.unit = d, u
    for doc in docs:
        doc.data = WRITERS[doc.kind](doc)
    asked = []
    for fact in facts:
        exact = rng.random() < 0.3
        template = fact.attribute.exact if exact else rng.choice(fact.attribute.paraphrases)
        asked.append(Question(template.format(e=fact.entity), fact, exact))
    stated: dict[str, set[str]] = {}
    for fact in facts:
        stated.setdefault(fact.entity, set()).add(fact.attribute.key)
    for n in range(nowhere):
        if n % 2 == 0:  # a project that does not exist
            entity, attribute = _name(rng, taken), rng.choice(ATTRIBUTES)
        else:  # an attribute the project never states
            entity = rng.choice(entities)
            attribute = rng.choice([a for a in ATTRIBUTES if a.key not in stated.get(entity, set())])
        template = attribute.exact if rng.random() < 0.3 else rng.choice(attribute.paraphrases)
        asked.append(Question(template.format(e=entity), None))
    return Corpus(docs, facts, asked)


# --- writers: each kind by its own library ---------------------------------------------------------


def _pdf(doc: Doc) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    for heading, paragraphs in doc.units:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 14)
        pdf.cell(0, 10, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=9)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 4.5, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        assert pdf.get_y() < pdf.h - 5, "a page's text ran past its bottom"
    return bytes(pdf.output())


def _docx(doc: Doc) -> bytes:
    import docx

    document = docx.Document()
    for heading, paragraphs in doc.units:
        document.add_heading(heading, level=1)
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _xlsx(doc: Doc) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for heading, paragraphs in doc.units:
        sheet = book.create_sheet(heading)
        sheet.append(["Item", "Note"])
        for n, paragraph in enumerate(paragraphs, 1):
            sheet.append([f"Note {n}", paragraph])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _pptx(doc: Doc) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for heading, paragraphs in doc.units:
        slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
        slide.shapes.title.text = heading
        box = slide.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(5)).text_frame
        box.word_wrap = True
        box.text = paragraphs[0]
        for paragraph in paragraphs[1:]:
            box.add_paragraph().text = paragraph
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _html(doc: Doc) -> bytes:
    body = "".join(
        f"<h2>{heading}</h2>" + "".join(f"<p>{p}</p>" for p in paragraphs)
        for heading, paragraphs in doc.units
    )
    return f"<!doctype html><html><head><title>{doc.name}</title></head><body>{body}</body></html>".encode()


def _md(doc: Doc) -> bytes:
    return "\n\n".join(f"## {h}\n\n" + "\n\n".join(ps) for h, ps in doc.units).encode()


def _txt(doc: Doc) -> bytes:
    return "\n\n".join(p for _, ps in doc.units for p in ps).encode()


WRITERS = {"pdf": _pdf, "docx": _docx, "xlsx": _xlsx, "pptx": _pptx, "html": _html, "md": _md, "txt": _txt}
