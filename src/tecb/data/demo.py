"""Small raw inputs in the real source formats, for the offline demo and the tests.

The texts are German and topic-coherent: each topic has its own vocabulary and a few sentences of
its own, mixed with neutral connecting sentences, so that a clustering has something to find and
TF-IDF scores well above chance. Everything is drawn from a seeded generator: the same seed writes
the same bytes.

Written files, in the formats of the real downloads (design §6):

- ``germeval2019.zip``: ``blurbs_train.txt``, ``blurbs_dev.txt``, ``blurbs_test.txt`` (``<book>``
  blocks, no root element, bare ``&`` in genre names, some real entities, soft hyphens,
  multi-category books, books the selection rules drop) and ``hierarchy.txt``;
- ``corpus.sqlite3``: a One Million Posts ``Articles`` table with HTML bodies and a small ``Posts`` forum;
- ``submissions.parquet``: Reddit submissions as the rehydration step writes them.
"""

from __future__ import annotations

import html
import sqlite3
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa

from tecb.data.sources.reddit import SUBMISSIONS_SCHEMA
from tecb.io import atomic_path, write_table

# --- vocabularies ---------------------------------------------------------------------------
# topic -> (phrases in the nominative, sentences of its own)

BLURB_GENRES = {
    "Literatur & Unterhaltung": {
        "Krimi & Thriller": (
            "die Kommissarin;der Tatort;das Alibi;die Leiche;der Verdächtige;die Ermittlung;der Serienmörder;"
            "die Spurensicherung;das Verhör;der Staatsanwalt;die Mordkommission;das Motiv",
            "Ein Mord erschüttert die Kleinstadt.|Die Ermittler stoßen auf eine Mauer des Schweigens.|"
            "Jede Spur führt tiefer in die Abgründe der Täter.",
        ),
        "Fantasy": (
            "der Drache;die Zauberin;das Schwert;der Elfenkönig;die Prophezeiung;das magische Amulett;"
            "der dunkle Herrscher;die Zwerge;das verwunschene Reich;der Zauberstab;die Hexe;das Einhorn",
            "Eine uralte Magie erwacht in den Bergen.|Nur die Auserwählte kann das Reich vor der Finsternis retten.|"
            "Zwischen Elfen und Zwergen droht ein neuer Krieg.",
        ),
        "Historische Romane": (
            "der Ritter;die Burg;das Mittelalter;die Kaufmannstochter;der Kaiser;die Pest;das Kloster;"
            "die Hanse;der Bauernaufstand;die Zunft;der Reichstag;die Hofdame",
            "Im Jahr 1348 wütet die Pest in Lübeck.|Am Hof des Kaisers werden Intrigen gesponnen.|"
            "Eine junge Frau kämpft um ihren Platz in der Zunft.",
        ),
    },
    "Sachbuch": {
        "Natur, Wissenschaft, Technik": (
            "das Universum;die Quantenphysik;der Klimawandel;die Evolution;das Gehirn;die Genetik;"
            "der Urknall;die Relativitätstheorie;das Experiment;die Forschung;der Algorithmus;die Artenvielfalt",
            "Der Physiker erklärt verständlich, wie das Universum entstand.|"
            "Neue Experimente verändern unser Bild der Natur.|Die Forschung steht vor einer Revolution.",
        ),
        "Politik & Gesellschaft": (
            "die Demokratie;der Populismus;die Globalisierung;der Sozialstaat;die Migration;das Parlament;"
            "die Ungleichheit;der Rechtsstaat;die Wahl;die Europäische Union;der Lobbyismus;die Bürgerrechte",
            "Die Autorin analysiert die Krise der Demokratie.|"
            "Wie gerecht ist unsere Gesellschaft wirklich?|Ein Plädoyer für eine offene Gesellschaft.",
        ),
        "(Zeit-) Geschichte": (
            "die Weimarer Republik;der Kalte Krieg;die Mauer;das Kaiserreich;der Erste Weltkrieg;"
            "die Wiedervereinigung;die Diktatur;das Zeitzeugnis;die Nachkriegszeit;die Revolution von 1848;"
            "der Widerstand;die DDR",
            "Der Historiker zeichnet ein eindrucksvolles Bild einer Epoche.|"
            "Anhand bisher unbekannter Dokumente wird die Geschichte neu erzählt.|Zeitzeugen erinnern sich.",
        ),
    },
    "Ratgeber": {
        "Essen & Trinken": (
            "das Rezept;die Backform;der Sauerteig;die Gemüsesuppe;das Kochbuch;der Schmorbraten;"
            "die Gewürze;das Dessert;die vegane Küche;der Wochenmarkt;die Pasta;das Brot",
            "Mit über hundert Rezepten für jeden Tag.|Einfache Gerichte mit frischen Zutaten aus der Region.|"
            "Schritt für Schritt gelingt jedes Gericht.",
        ),
        "Gesundheit & Ernährung": (
            "die Darmgesundheit;das Immunsystem;der Blutzucker;die Vitamine;das Fasten;die Entzündung;"
            "der Stoffwechsel;die Ballaststoffe;das Übergewicht;die Allergie;der Schlaf;die Bewegung",
            "Der Arzt erklärt, wie Ernährung und Gesundheit zusammenhängen.|"
            "Mit praktischen Tipps für mehr Wohlbefinden im Alltag.|Kleine Veränderungen mit großer Wirkung.",
        ),
        "Freizeit & Hobby": (
            "das Stricken;der Garten;die Fotografie;das Wandern;die Modelleisenbahn;das Angeln;"
            "der Gemüsegarten;die Nähmaschine;das Basteln;die Vogelbeobachtung;der Campingplatz;das Töpfern",
            "Mit vielen Anleitungen und Schritt-für-Schritt-Fotos.|"
            "Das ideale Buch für Einsteiger und Fortgeschrittene.|So wird das Hobby zur Leidenschaft.",
        ),
    },
    "Kinderbuch & Jugendbuch": {
        "Tiergeschichten": (
            "der kleine Bär;das Pony;die Katze Mimi;der freche Fuchs;das Eichhörnchen;die Entenfamilie;"
            "der Igel;das Kaninchen;die Schildkröte;der Bauernhof;das Fohlen;die Eule",
            "Eine zauberhafte Geschichte zum Vorlesen ab vier Jahren.|"
            "Die Tiere des Waldes halten zusammen.|Mit farbigen Bildern auf jeder Seite.",
        ),
        "Abenteuer": (
            "die Schatzkarte;das Piratenschiff;die geheime Höhle;der Dschungel;die Bande;das Floß;"
            "die Expedition;der Vulkan;die Insel;das Baumhaus;die Detektive;der Kompass",
            "Vier Freunde erleben den Sommer ihres Lebens.|Ein spannendes Abenteuer für junge Leser.|"
            "Mutig machen sich die Kinder auf die Suche.",
        ),
    },
}

NEWS_TOPICS = {
    "Sport": (
        "der Trainer;das Tor;die Bundesliga;der Elfmeter;die Meisterschaft;der Tabellenführer;"
        "das Derby;die Nationalmannschaft;der Stürmer;das Finale;die Abfahrt;der Weltcup",
        "Die Mannschaft siegte nach einem späten Treffer.|Der Trainer zeigte sich nach dem Spiel zufrieden.|"
        "In der Tabelle rückt das Team auf den zweiten Platz vor.",
    ),
    "International": (
        "der UN-Sicherheitsrat;die Regierung in Washington;der Gipfel;die Sanktionen;der Präsident;"
        "das Abkommen;die Waffenruhe;der Außenminister;die Flüchtlinge;die Opposition;die Botschaft;der Konflikt",
        "Die Verhandlungen in Genf wurden ohne Ergebnis vertagt.|"
        "Beobachter sprechen von einer gefährlichen Eskalation.|Die internationale Gemeinschaft zeigt sich besorgt.",
    ),
    "Web": (
        "das Smartphone;die App;der Datenschutz;die Sicherheitslücke;das Update;der Konzern Google;"
        "die künstliche Intelligenz;das soziale Netzwerk;der Hackerangriff;die Cloud;das Betriebssystem;der Browser",
        "Nutzer sollten das Update möglichst rasch installieren.|"
        "Datenschützer kritisieren die neue Funktion scharf.|Die App ist ab sofort kostenlos verfügbar.",
    ),
    "Kultur": (
        "die Premiere;das Burgtheater;die Ausstellung;der Regisseur;die Oper;das Festival;"
        "der Roman;die Galerie;das Konzert;die Inszenierung;der Schriftsteller;die Filmpremiere",
        "Das Publikum spendete minutenlangen Applaus.|Die Inszenierung spaltet die Kritik.|"
        "Die Ausstellung ist bis März zu sehen.",
    ),
    "Panorama": (
        "der Unfall;die Feuerwehr;das Unwetter;die Polizei;der Brand;die Lawine;das Hochwasser;"
        "der Rettungseinsatz;die Verkehrsbehinderung;der Sturm;das Erdbeben;die Festnahme",
        "Verletzt wurde nach Angaben der Polizei niemand.|Die Feuerwehr stand die ganze Nacht im Einsatz.|"
        "Die Ermittlungen zur Ursache laufen.",
    ),
    "Etat": (
        "der ORF;die Quote;das Fernsehprogramm;der Generaldirektor;die Zeitung;der Privatsender;"
        "die Medienbehörde;das Publikum;die Rundfunkgebühr;der Moderator;die Reichweite;das Magazin",
        "Die Quoten der Sendung lagen deutlich über dem Durchschnitt.|"
        "Der Stiftungsrat entscheidet im Herbst.|Die Medienbranche steht unter Druck.",
    ),
    "Wissenschaft": (
        "die Studie;das Forscherteam;die Universität Wien;der Impfstoff;das Teleskop;die Raumsonde;"
        "die Zellforschung;der Fossilfund;das Genom;die Klimaforschung;der Planet;die Archäologie",
        "Die Ergebnisse wurden im Fachjournal Nature veröffentlicht.|"
        "Die Forscher hoffen auf neue Therapien.|Weitere Untersuchungen sollen folgen.",
    ),
    "Inland": (
        "der Nationalrat;die Koalition;der Bundeskanzler;die Landtagswahl;die ÖVP;die SPÖ;"
        "das Budget;der Ministerrat;die Bildungsreform;der Landeshauptmann;die Asylnovelle;die Umfrage",
        "Die Opposition kündigte heftigen Widerstand an.|Der Ministerrat soll den Entwurf nächste Woche beschließen.|"
        "In der Koalition herrscht Uneinigkeit.",
    ),
    "Wirtschaft": (
        "die Inflation;der Aktienkurs;die Notenbank;der Leitzins;die Arbeitslosigkeit;das Unternehmen;"
        "der Umsatz;die Insolvenz;der Export;die Gewerkschaft;die Bilanz;der Ölpreis",
        "Analysten rechnen mit einem schwachen Quartal.|Die Aktie gab an der Börse deutlich nach.|"
        "Die Gewerkschaft fordert höhere Löhne.",
    ),
}

SUBREDDITS = {
    "Finanzen": (
        "das ETF-Depot;die Rente;der Sparplan;die Dividende;das Tagesgeldkonto;die Steuererklärung",
        "Lohnt sich ein Sparplan noch?|Welcher Broker ist der günstigste?",
    ),
    "fussball": (
        "der BVB;das Abseits;der Schiedsrichter;die Champions League;der Transfer;das Stadion",
        "Was für ein Spiel gestern!|Der Transfer ist endlich offiziell.",
    ),
    "kochen": (
        "der Schmortopf;das Rezept;die Knoblauchsoße;der Hefeteig;die Gusseisenpfanne;das Curry",
        "Mein erster Versuch mit Sauerteig.|Was kocht ihr heute?",
    ),
    "wissenschaft": (
        "die Studie;das Experiment;der Teilchenbeschleuniger;die Hypothese;das Paper;die Peer-Review",
        "Neue Studie zeigt überraschende Ergebnisse.|Kann mir jemand das Paper erklären?",
    ),
    "berlin": (
        "die Ringbahn;der Späti;das Bürgeramt;die BVG;der Görlitzer Park;die Wohnungssuche",
        "Termin beim Bürgeramt ist unmöglich.|Die Ringbahn fällt schon wieder aus.",
    ),
    "Austria": (
        "der Heurige;die Semmel;das Wiener Schnitzel;der ÖBB-Railjet;die Jause;das Gemeindeamt",
        "Servus aus Graz!|Gibt es noch gute Heurige in Wien?",
    ),
    "schach": (
        "die Eröffnung;der Springer;das Endspiel;die Rochade;der Großmeister;das Damengambit",
        "Wie verbessere ich meine Eröffnungen?|Ich habe endlich 1500 Elo erreicht.",
    ),
    "fahrrad": (
        "die Kettenschaltung;der Fahrradweg;das Lastenrad;die Scheibenbremse;der Schlauch;das Rennrad",
        "Welches Lastenrad könnt ihr empfehlen?|Mein Schlauch ist schon wieder platt.",
    ),
    "Gaming": (
        "das Rollenspiel;der Koop-Modus;die Konsole;das Speedrun;der Endboss;die Grafikkarte",
        "Welches Spiel zockt ihr gerade?|Der Endboss ist einfach unfair.",
    ),
    "garten": (
        "das Hochbeet;die Tomatenpflanze;der Kompost;die Schnecke;das Saatgut;der Rasenmäher",
        "Meine Tomaten werden nicht rot.|Was tun gegen Schnecken im Hochbeet?",
    ),
    "reisen": (
        "der Rucksack;die Interrail-Reise;das Hostel;der Nachtzug;die Unterkunft;das Reiseziel",
        "Tipps für zwei Wochen Portugal?|Mit dem Nachtzug nach Rom.",
    ),
    "Musik": (
        "die Gitarre;das Konzert;der Plattenspieler;die Band;das Album;der Synthesizer",
        "Welches Album hört ihr gerade?|Mein erstes Konzert mit der Band.",
    ),
}

NEUTRAL = [
    "Das Buch erzählt eine bewegende Geschichte.",
    "Ein Werk, das lange nachwirkt.",
    "Mit einem Nachwort des Verlags.",
    "Die Neuausgabe ist vollständig überarbeitet.",
]

PHRASE_TEMPLATES = [
    "Im Mittelpunkt steht {a}.",
    "Dabei spielt auch {a} eine wichtige Rolle.",
    "Hinzu kommt {a}.",
    "Am Ende bleiben {a} und {b}.",
    "Schon bald wird klar, worauf es ankommt: {a}.",
    "{A} und {b} bestimmen das Geschehen.",
]
TITLE_TEMPLATES = ["{A}", "{A} und {b}", "{A}: {b}", "{A} im Fokus"]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _phrases(spec: tuple[str, str]) -> tuple[list[str], list[str]]:
    return spec[0].split(";"), spec[1].split("|")


def _title(rng: np.random.Generator, words: list[str]) -> str:
    a, b = rng.choice(words, 2, replace=False)
    template = TITLE_TEMPLATES[rng.integers(len(TITLE_TEMPLATES))]
    return template.format(a=a, b=b, A=_cap(a))


def _paragraph(rng: np.random.Generator, words: list[str], own: list[str], n: int) -> str:
    sentences = []
    for _ in range(n):
        if rng.random() < 0.3:
            sentences.append(own[rng.integers(len(own))])
        else:
            a, b = rng.choice(words, 2, replace=False)
            sentences.append(PHRASE_TEMPLATES[rng.integers(len(PHRASE_TEMPLATES))].format(a=a, b=b, A=_cap(a)))
    return " ".join(sentences)


# --- GermEval 2019 blurbs -------------------------------------------------------------------


def _book_xml(title: str, body: str, categories: list[list[tuple[int, str]]], isbn: int) -> str:
    cats = "\n".join(
        "<category>\n" + "\n".join(f'<topic d="{d}">{name}</topic>' for d, name in path) + "\n</category>"
        for path in categories
    )
    return (
        '<book date="2019-01-04" xml:lang="de">\n'
        f"<title>{title}</title>\n<body>{body}</body>\n"
        "<copyright>(c) tecb demo data</copyright>\n"
        f"<categories>\n{cats}\n</categories>\n"
        "<authors>tecb</authors>\n<published>2019-01-01</published>\n"
        f"<isbn>{isbn}</isbn>\n<url>https://example.org/buch/{isbn}</url>\n</book>\n"
    )


def _blurb_records(rng, books_per_genre: int) -> list[tuple]:
    """``(title, body, category paths)`` of ``books_per_genre`` books per fine genre, in genre order."""
    records = []
    for g0, fine in BLURB_GENRES.items():
        for g1, spec in fine.items():
            words, own = _phrases(spec)
            for _ in range(books_per_genre):
                title = _title(rng, words)
                body = _paragraph(rng, words, own, int(rng.integers(4, 8)))
                if rng.random() < 0.3:
                    body += " " + NEUTRAL[rng.integers(len(NEUTRAL))]
                cats = [[(0, g0), (1, g1)]]
                if rng.random() < 0.15:  # a second category path: another fine genre of the same coarse genre
                    other = [g for g in fine if g != g1]
                    cats.append([(0, g0), (1, other[rng.integers(len(other))])])
                records.append((title, body, cats))
    return records


def _dropped_blurbs() -> list[str]:
    """Book records the selection rules drop: no body, two coarse genres, three fine genres."""
    (g0a, fa), (g0b, fb) = list(BLURB_GENRES.items())[:2]
    fa_names, fb_names = list(fa), list(fb)
    return [
        _book_xml("Ohne Klappentext", "", [[(0, g0a), (1, fa_names[0])]], 9783999999991),
        _book_xml(
            "Zwei Welten",
            "Ein Grenzfall &quot;zwischen&quot; den Genres.",
            [[(0, g0a), (1, fa_names[0])], [(0, g0b), (1, fb_names[0])]],
            9783999999992,
        ),
        _book_xml("Alles auf einmal", "Ein Sammelband.", [[(0, g0a), (1, n)] for n in fa_names[:3]], 9783999999993),
    ]


def write_germeval_zip(path: str | Path, books_per_genre: int = 30, *, seed: int) -> Path:
    """Write a GermEval 2019 Task 1 style zip with train/dev/test files and ``hierarchy.txt``."""
    rng = np.random.default_rng(seed)
    records = _blurb_records(rng, books_per_genre)
    rng.shuffle(records)
    xml_records = []
    for i, (title, body, cats) in enumerate(records):
        # real entities in some records, a soft hyphen in others; genre names keep their bare '&'
        t = f"&quot;{title}&quot;" if i % 7 == 0 else title
        b = body.replace("ung", "un\u00adg", 1) if i % 5 == 0 else body
        xml_records.append(_book_xml(t, b.replace("&", "&amp;"), cats, 9783000000000 + i))
    xml_records += _dropped_blurbs()
    n = len(xml_records)
    parts = {
        "blurbs_train.txt": xml_records[: int(0.7 * n)],
        "blurbs_dev.txt": xml_records[int(0.7 * n) : int(0.85 * n)],
        "blurbs_test.txt": xml_records[int(0.85 * n) :],
    }
    hierarchy = "".join(f"{g0}\t{g1}\n" for g0, fine in BLURB_GENRES.items() for g1 in fine)
    path = Path(path)
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            # fixed member times: the same seed writes the same bytes (the datasets record the zip's SHA-256)
            for name, data in [*((n, "\n".join(r)) for n, r in parts.items()), ("hierarchy.txt", hierarchy)]:
                info = zipfile.ZipInfo(f"germeval2019t1-public-data-final/{name}", date_time=(2019, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
    return path


# --- One Million Posts ----------------------------------------------------------------------


def _article_html(description: str, paragraphs: list[str]) -> str:
    ps = "".join(f"<p>{html.escape(p, quote=False)}</p>" for p in paragraphs)
    return (
        f'<div class="section" id="content-main"><h2 itemprop="description">{html.escape(description, quote=False)}</h2>'
        f'<div class="copytext">{ps}<p><strong></strong></p></div>'
        '<div class="supplemental"><p>Link: derStandard.at</p></div></div>'
    )


POST_OPENERS = ["Ich finde", "Ehrlich gesagt:", "Typisch:", "Endlich", "Schon wieder", "Wer hätte gedacht:"]
REPLY_OPENERS = ["Da stimme ich zu,", "Nein,", "Genau,", "Das sehe ich anders,", "Richtig,", "Unsinn,"]


def _forum_posts(articles: list[tuple[str, str, str]], seed: int, threads_per_article: int = 2) -> list[tuple]:
    """A small ``Posts`` table in the real schema for the newsroom articles of ``articles`` (Path, Title, Body):
    per article a few top-level posts on its topic, each with a reply that takes up one of its phrases, and one
    deleted post. Drawn from its own generator, so the articles (and every dataset built from them) stay as they
    were before the table existed."""
    rng = np.random.default_rng([seed, 1])
    rows, next_id = [], 1
    for article_id, (path, _, _) in enumerate(articles, start=1):
        parts = path.split("/")
        if parts[0] != "Newsroom" or parts[1] not in NEWS_TOPICS:
            continue
        words, _ = _phrases(NEWS_TOPICS[parts[1]])
        for _ in range(threads_per_article):
            a, b, c = rng.choice(words, 3, replace=False)
            opener = POST_OPENERS[rng.integers(len(POST_OPENERS))]
            body = f"{opener} {a} und {b} sind das eigentliche Thema."
            parent = next_id
            rows.append(
                (
                    parent,
                    None,
                    article_id,
                    int(rng.integers(1, 400)),
                    "2015-06-01 13:00:00",
                    "online",
                    "",
                    body,
                    int(rng.integers(0, 20)),
                    int(rng.integers(0, 20)),
                )
            )
            reply = f"{REPLY_OPENERS[rng.integers(len(REPLY_OPENERS))]} {_cap(b)} hat mit {c} wenig zu tun."
            rows.append(
                (
                    parent + 1,
                    parent,
                    article_id,
                    int(rng.integers(1, 400)),
                    "2015-06-01 14:00:00",
                    "online",
                    "Re: " + _cap(a) if rng.random() < 0.3 else "",
                    reply,
                    int(rng.integers(0, 9)),
                    int(rng.integers(0, 9)),
                )
            )
            next_id += 2
        rows.append((next_id, None, article_id, 1, "2015-06-01 15:00:00", "deleted", "", "Gelöscht.", 0, 0))
        next_id += 1
    return rows


def write_million_posts_sqlite(path: str | Path, articles_per_topic: int = 30, *, seed: int) -> Path:
    """Write a One Million Posts style ``corpus.sqlite3``: table ``Articles`` (HTML bodies) and a small forum,
    table ``Posts`` (:func:`_forum_posts`)."""
    rng = np.random.default_rng(seed)
    rows = []
    for label, spec in NEWS_TOPICS.items():
        words, own = _phrases(spec)
        for _ in range(articles_per_topic):
            description = _paragraph(rng, words, own, 1)
            paragraphs = [_paragraph(rng, words, own, int(rng.integers(2, 4))) for _ in range(int(rng.integers(2, 5)))]
            rows.append((f"Newsroom/{label}/{label}Sub", _title(rng, words), _article_html(description, paragraphs)))
    rng.shuffle(rows)
    rows += [
        ("Newsroom/User/Kolumne", "Ein Nutzerkommentar", "<p>Nicht Teil des Datensatzes.</p>"),
        ("Diskurs/Blog", "Ein Blogeintrag", "<p>Nicht Teil des Datensatzes.</p>"),
    ]
    path = Path(path)
    with atomic_path(path) as tmp:
        con = sqlite3.connect(tmp)
        con.execute(
            "CREATE TABLE Articles (ID_Article INTEGER PRIMARY KEY, Path TEXT, publishingDate TIMESTAMP, Title TEXT, Body TEXT)"
        )
        con.executemany(
            "INSERT INTO Articles VALUES (?, ?, ?, ?, ?)",
            [(i + 1, p, "2015-06-01 12:00:00", t, b) for i, (p, t, b) in enumerate(rows)],
        )
        con.execute(
            "CREATE TABLE Posts (ID_Post INTEGER PRIMARY KEY, ID_Parent_Post INTEGER, ID_Article INTEGER, "
            "ID_User INTEGER, CreatedAt TIMESTAMP, Status TEXT, Headline TEXT, Body TEXT, PositiveVotes INTEGER, "
            "NegativeVotes INTEGER)"
        )
        con.executemany("INSERT INTO Posts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _forum_posts(rows, seed))
        con.commit()
        con.close()
    return path


# --- Reddit ---------------------------------------------------------------------------------


def write_reddit_submissions(path: str | Path, posts_per_subreddit: int = 25, *, seed: int) -> Path:
    """Write ``submissions.parquet`` as the rehydration step does (id, subreddit, title, selftext, created_utc)."""
    rng = np.random.default_rng(seed)
    recs = []
    for sub, spec in SUBREDDITS.items():
        words, own = _phrases(spec)
        for _ in range(posts_per_subreddit):
            title = own[rng.integers(len(own))] if rng.random() < 0.3 else _title(rng, words) + "?"
            r = rng.random()
            if r < 0.1:
                selftext = ""
            elif r < 0.15:
                selftext = "[removed]" if rng.random() < 0.5 else "[deleted]"
            else:
                selftext = _paragraph(rng, words, own, int(rng.integers(1, 4)))
                if rng.random() < 0.3:
                    selftext += (
                        f" Mehr dazu [hier](https://www.reddit.com/r/{sub}/wiki) und unter https://example.org/{sub}."
                    )
            recs.append((sub, title, selftext))
    rng.shuffle(recs)
    ids = [np.base_repr(int(46656 + 7919 * i), 36).lower() for i in range(len(recs))]
    table = pa.table(
        {
            "id": ids,
            "subreddit": [r[0] for r in recs],
            "title": [r[1] for r in recs],
            "selftext": [r[2] for r in recs],
            "created_utc": [1.6e9 + 3600.0 * i for i in range(len(recs))],
        },
        schema=SUBMISSIONS_SCHEMA,
    )
    write_table(table, path)
    return Path(path)


def write_all(outdir: str | Path, *, seed: int) -> dict[str, Path]:
    """Write every demo source into ``outdir``; return their paths by source name."""
    outdir = Path(outdir)
    return {
        "germeval2019": write_germeval_zip(outdir / "germeval2019.zip", seed=seed),
        "million_posts": write_million_posts_sqlite(outdir / "corpus.sqlite3", seed=seed),
        "reddit": write_reddit_submissions(outdir / "submissions.parquet", seed=seed),
    }
