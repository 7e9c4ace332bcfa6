"""Each format read from a small real document made in the test (python-docx, odfpy, fpdf2, or
written by hand for RTF, Markdown, reStructuredText and EPUB): exact words, page/paragraph
locations, dropped running headers, joined hyphenation, magic-byte checks, and the limits."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.cli.main import main
from coderiv.errors import CoderivError, MissingExtraError
from coderiv.index.index import Index
from coderiv.ranking.search import Searcher
from coderiv.text.formats import ExtractionError, extract
from coderiv.text.formats.pdf import drop_running_lines
from coderiv.text.formats.ziparchive import MAX_RATIO
from coderiv.text.reading import read_query
from tests.support.formats import check_extract

PARAGRAPHS = [
    "Otters have returned to the lower river after thirty years of absence.",
    "Salmon counts rose sharply once the old weir was removed from the channel.",
    "Herons nest in the alder carr beside the flood meadows every spring.",
]


def make_pdf(pages: list[list[str]], header: str | None = None, footer: bool = False, **encryption: str) -> bytes:
    from fpdf import FPDF

    class Document(FPDF):  # type: ignore[misc]
        def header(self) -> None:
            if header:
                self.set_font("Helvetica", size=9)
                self.cell(0, 8, header, new_x="LMARGIN", new_y="NEXT")

        def footer(self) -> None:
            if footer:
                self.set_y(-15)
                self.set_font("Helvetica", size=9)
                self.cell(0, 8, f"Page {self.page_no()}")

    pdf = Document()
    if encryption:
        pdf.set_encryption(**encryption)
    pdf.set_font("Helvetica", size=12)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 7, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def make_docx(paragraphs: list[str], table: list[list[str]] | None = None, footnote: str | None = None) -> bytes:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, text in enumerate(row):
                grid.cell(r, c).text = text
    out = io.BytesIO()
    document.save(out)
    if footnote is None:
        return out.getvalue()
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    notes = (
        f'<?xml version="1.0"?><w:footnotes {ns}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
        f'</w:footnote><w:footnote w:id="1"><w:p><w:r><w:t>{footnote}</w:t></w:r></w:p></w:footnote></w:footnotes>'
    )
    return add_member(out.getvalue(), "word/footnotes.xml", notes.encode())


def add_member(package: bytes, name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info))
        dst.writestr(name, data)
    return out.getvalue()


def make_odt(heading: str, paragraphs: list[str], note: str | None = None) -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, Note, NoteBody, NoteCitation, P, S

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text=heading))
    for n, text in enumerate(paragraphs):
        first, _, rest = text.partition(" ")
        paragraph = P(text=first)
        paragraph.addElement(S(c=1))  # a text:s run of spaces
        paragraph.addText(rest)
        if note and n == 0:
            citation = Note(id="n1", noteclass="footnote")
            citation.addElement(NoteCitation(text="1"))
            body = NoteBody()
            body.addElement(P(text=note))
            citation.addElement(body)
            paragraph.addElement(citation)
        document.text.addElement(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_epub(chapters: list[str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        items = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in reversed(range(len(chapters))))  # spine order, not file order
        book.writestr(
            "OEBPS/book.opf",
            f'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest>{items}</manifest><spine>{spine}</spine></package>',
        )
        for i, text in enumerate(chapters):
            book.writestr(f"OEBPS/c{i}.xhtml", f"<html><head><title>T{i}</title></head><body><p>{text}</p></body></html>")
    return out.getvalue()


def words(text: str) -> list[str]:
    return text.split()


# --- PDF -------------------------------------------------------------------------------------

def test_pdf_pages_headers_footers_and_hyphenation() -> None:
    pages = [
        ["Otters return to the river", "ecology of the lower valley and an evalu-", "ation of the methods."],
        ["Salmon counts rose after the weir", "was removed; the Anglo-", "Saxon mill records agree."],
        ["Herons nest in the alder carr."],
    ]
    extracted = extract(make_pdf(pages, header="University of Testing Thesis Series", footer=True), "thesis.pdf")
    assert extracted.format == "pdf"
    assert words(extracted.text) == words(
        "Otters return to the river ecology of the lower valley and an evaluation of the methods. "
        "Salmon counts rose after the weir was removed; the Anglo-Saxon mill records agree. "
        "Herons nest in the alder carr."
    )
    assert "University" not in extracted.text and "Page" not in extracted.text
    assert extracted.locations.labels == ("page 1", "page 2", "page 3")
    assert extracted.locations.at(extracted.text.index("Salmon")) == "page 2"
    assert extracted.locations.at(extracted.text.index("Herons")) == "page 3"


def test_pdf_header_on_fewer_than_half_the_pages_is_kept() -> None:
    pages = [["Preface", "Otters return."], ["Preface", "Salmon rise."], ["Herons nest."], ["Voles hide."], ["Eels run."]]
    text = extract(make_pdf(pages), "a.pdf").text
    assert text.count("Preface") == 2


def test_chapter_running_heads_dropped_on_three_pages_in_a_row() -> None:
    pages = [
        ["1 Introduction", "Otters return."],
        ["Chapter 1: Introduction 2", "Salmon rise.", "Weirs fall."],
        ["Chapter 1: Introduction 3", "Herons nest.", "Voles hide."],
        ["Chapter 1: Introduction 4", "Eels run."],
        ["2 Methods", "Nets were set."],
        ["Chapter 2: Methods 6", "Counts were made."],
        ["Chapter 2: Methods 7", "Tags were read."],
    ]
    assert drop_running_lines(pages) == [
        ["1 Introduction", "Otters return."], ["Salmon rise.", "Weirs fall."], ["Herons nest.", "Voles hide."], ["Eels run."],
        ["2 Methods", "Nets were set."], ["Chapter 2: Methods 6", "Counts were made."], ["Chapter 2: Methods 7", "Tags were read."],
    ]


def test_pdf_limits() -> None:
    good = make_pdf([["Otters return to the river."]] * 3)
    with pytest.raises(ExtractionError, match="corrupt PDF"):
        extract(good[: len(good) // 3], "cut.pdf")
    with pytest.raises(ExtractionError, match="^encrypted PDF: needs a password$"):
        extract(make_pdf([["secret words"]], owner_password="o", user_password="u"), "locked.pdf")
    from fpdf import FPDF

    scan = FPDF()
    scan.add_page()
    scan.rect(20, 20, 100, 100, style="F")
    with pytest.raises(ExtractionError, match="^no text layer: needs OCR$"):
        extract(bytes(scan.output()), "scan.pdf")


def test_pdf_page_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_pdf([["one"], ["two"], ["three"]])
    monkeypatch.setenv("CODERIV_MAX_PAGES", "2")
    with pytest.raises(ExtractionError, match="3 pages, over the 2-page cap"):
        extract(data, "long.pdf")
    monkeypatch.setenv("CODERIV_MAX_PAGES", "3")
    assert words(extract(data, "long.pdf").text) == ["one", "two", "three"]


# --- DOCX, ODT, EPUB -------------------------------------------------------------------------

def test_docx_body_tables_and_footnotes() -> None:
    data = make_docx(PARAGRAPHS[:2], table=[["alder", "willow"], ["heron", "otter"]], footnote="Counted by the trust.")
    extracted = extract(data, "report.docx")
    assert extracted.format == "docx"
    assert words(extracted.text) == words(" ".join(PARAGRAPHS[:2]) + " alder willow heron otter Counted by the trust.")
    at = extracted.locations.at
    assert at(extracted.text.index("Salmon")) == "paragraph 2"
    assert at(extracted.text.index("willow")) == "paragraph 4"  # table cells count as paragraphs
    assert at(extracted.text.index("Counted")) == "footnote 1"


def test_odt_headings_spaces_and_notes() -> None:
    extracted = extract(make_odt("River survey", PARAGRAPHS[:2], note="Counted by the trust."), "report.odt")
    assert extracted.format == "odt"
    assert extracted.text.split("\n\n") == ["River survey", *PARAGRAPHS[:2], "Counted by the trust."]
    assert extracted.locations.labels == ("paragraph 1", "paragraph 2", "paragraph 3", "footnote 1")


def test_epub_chapters_in_spine_order() -> None:
    extracted = extract(make_epub(PARAGRAPHS), "book.epub")
    assert extracted.text.split("\n\n") == list(reversed(PARAGRAPHS))
    assert extracted.locations.at(extracted.text.index("Otters")) == "chapter 3"


def test_zip_bomb_and_entity_expansion_refused() -> None:
    base = make_docx(["harmless"])
    bomb = add_member(base, "word/document.xml", b"<a>" + b" " * (4 << 20) + b"</a>")
    with pytest.raises(ExtractionError, match=f"member word/document.xml expands beyond ratio {MAX_RATIO} "):
        extract(bomb, "bomb.docx")
    laughs = b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;">]><w>&b;</w>'
    with pytest.raises(ExtractionError, match="unsafe XML in DOCX word/document.xml"):
        extract(add_member(base, "word/document.xml", laughs), "laughs.docx")
    with pytest.raises(ExtractionError, match="corrupt DOCX"):
        extract(base[:200], "cut.docx")


# --- text formats ----------------------------------------------------------------------------

def test_markdown_drops_urls_marks_and_fences() -> None:
    source = b"# River *notes*\n\nSee [the survey](https://example.org/otters) for **details**.\n\n```python\nprint(otters)\n```\n"
    assert words(extract(source, "notes.md").text) == ["River", "notes", "See", "the", "survey", "for", "details.", "print(otters)"]


def test_rst_unknown_sphinx_roles_and_directives_keep_their_text() -> None:
    source = (
        b"Title\n=====\n\nRead :ref:`the guide <guide>` and :func:`spawn` now.\n\n"
        b".. versionadded:: 2.0\n   Otters arrived.\n\n.. include:: /etc/passwd\n"
    )
    extracted = extract(source, "guide.rst")
    assert words(extracted.text) == ["Title", "Read", "the", "guide", "and", "spawn", "now.", "2.0", "Otters", "arrived."]


def test_rtf_text() -> None:
    source = rb"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard Otters {\b return} to the river.\par Caf\'e9 open.\par}"
    assert words(extract(source, "note.rtf").text) == ["Otters", "return", "to", "the", "river.", "Café", "open."]


def test_magic_bytes_win_over_the_extension_and_are_reported() -> None:
    fake = extract(b"<!DOCTYPE html><html><body><p>Otters return.</p></body></html>", "paper.pdf")
    assert (fake.format, words(fake.text), fake.note) == ("html", ["Otters", "return."], "content is HTML, not PDF: read as HTML")
    real = extract(make_pdf([["Otters return."]]), "paper.txt")
    assert (real.format, words(real.text), real.note) == ("pdf", ["Otters", "return."], "content is PDF, not TEXT: read as PDF")
    plain = extract(b"Otters return.", "paper.docx")
    assert (plain.format, plain.note) == ("text", "content is TEXT, not DOCX: read as TEXT")
    assert extract(b"<html><p>x</p></html>", "page.txt").note is None  # HTML in .txt: read as HTML, as ever


# --- the paths that read documents -----------------------------------------------------------

@pytest.fixture()
def twins(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plain.txt").write_text("\n\n".join(PARAGRAPHS))
    (folder / "thesis.pdf").write_bytes(make_pdf([[p] for p in PARAGRAPHS], header="University of Testing", footer=True))
    (folder / "report.docx").write_bytes(make_docx(PARAGRAPHS))
    (folder / "report.odt").write_bytes(make_odt(PARAGRAPHS[0], PARAGRAPHS[1:]))
    (folder / "book.epub").write_bytes(make_epub(PARAGRAPHS))
    (folder / "notes.md").write_text("\n\n".join(f"*{p}*" for p in PARAGRAPHS))
    (folder / "guide.rst").write_text("\n\n".join(PARAGRAPHS))
    (folder / "memo.rtf").write_text("{\\rtf1\\ansi " + "\\par ".join(PARAGRAPHS) + "}")
    (folder / "fake.pdf").write_text("<html><body>" + PARAGRAPHS[0] + "</body></html>")
    (folder / "locked.pdf").write_bytes(make_pdf([["secret"]], owner_password="o", user_password="u"))
    (folder / "unrelated.txt").write_text("Granite quarries supplied the cathedral builders with stone.")
    return folder


def test_every_format_scores_100_percent_against_its_plain_twin(twins: Path, tmp_path: Path) -> None:
    report = Index.update_from(twins, tmp_path / "idx", workers=1)
    assert [(s.doc_id, s.reason, s.format) for s in report.skipped] == [("locked.pdf", "encrypted PDF: needs a password", "pdf")]
    assert report.notes == [("fake.pdf", "content is HTML, not PDF: read as HTML")]
    assert report.by_format() == {
        "docx": (1, {}), "epub": (1, {}), "html": (1, {}), "markdown": (1, {}), "odt": (1, {}),
        "pdf": (1, {"encrypted PDF: needs a password": 1}), "rst": (1, {}), "rtf": (1, {}), "text": (2, {}),
    }
    searcher = Searcher(Index.open(tmp_path / "idx"))
    result = searcher.search("\n\n".join(PARAGRAPHS), measure="identity5", top=20)
    percent = {m.doc_id: round(m.percent, 6) for m in result.matches}
    twins_ = ["plain.txt", "thesis.pdf", "report.docx", "report.odt", "book.epub", "notes.md", "guide.rst", "memo.rtf"]
    assert {name: percent[name] for name in twins_} == dict.fromkeys(twins_, 100.0)
    assert percent["fake.pdf"] < 50


def test_compare_shows_pages(twins: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.pdf"
    filler = "Granite quarries supplied the cathedral builders with stone for a century."
    mixed.write_bytes(make_pdf([[PARAGRAPHS[0]], [filler], [PARAGRAPHS[2]]]))
    runner = CliRunner()
    for other, places in ((twins / "thesis.pdf", ["page 1-3"]), (mixed, ["page 1", "page 3"])):
        result = runner.invoke(main, ["compare", str(twins / "plain.txt"), str(other), "--method", "passages", "--format", "json"])
        assert result.exit_code == 0, result.output
        passages = json.loads(result.output)["passages"]
        assert [(p["a_location"], p["b_location"]) for p in passages] == [(None, place) for place in places]
    table = runner.invoke(main, ["compare", str(mixed), str(twins / "plain.txt"), "--method", "passages"]).output
    exact, aligned = table.split(" aligned passages")
    rows = [line.split() for line in exact.splitlines()[:-1] if line.split()[:2] and all(w.isdigit() for w in line.split()[:2])]
    assert [row[5:7] for row in rows] == [["page", "1"], ["page", "3"]]
    rows = [line.split() for line in aligned.splitlines() if line.split()[:2] and all(w.isdigit() for w in line.split()[:2])]
    # aligned passages are located too: the 11-word filler page between the two copied pages is
    # joined into one passage (inserted text under the alignment's 20-word gap, docs/alignment.md)
    assert [row[6:8] for row in rows] == [["page", "1-3"]]


def test_missing_extra_skips_when_indexing_and_fails_a_query(twins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import pypdfium2 now raises ImportError
    message = "reading PDF needs the optional dependencies coderiv[formats]: pip install 'coderiv[formats]'"
    report = Index.update_from(twins, tmp_path / "idx", workers=1)
    assert {s.doc_id: s.reason for s in report.skipped} == {"thesis.pdf": message, "locked.pdf": message}
    with pytest.raises(MissingExtraError, match=r"coderiv\[formats\]"):
        read_query(str(twins / "thesis.pdf"))
    result = CliRunner().invoke(main, ["query", str(twins / "thesis.pdf"), "--index", str(tmp_path / "idx")])
    assert result.exit_code != 0 and message in result.output


def test_query_refuses_unreadable_documents_in_one_line(twins: Path) -> None:
    with pytest.raises(CoderivError, match=r"locked.pdf: encrypted PDF: needs a password$"):
        read_query(str(twins / "locked.pdf"))
    document = read_query(str(twins / "fake.pdf"))
    assert (document.format, document.note) == ("html", "content is HTML, not PDF: read as HTML")


# --- fuzz: damaged input of every format gives a one-line reason or a text, never a crash ----

_VALID: dict[str, bytes] = {}


def valid_sample(name: str) -> bytes:
    """One small real document per format, made once per test session."""
    if not _VALID:
        _VALID.update({
            "a.pdf": make_pdf([[PARAGRAPHS[0]], [PARAGRAPHS[1]]]), "a.docx": make_docx(PARAGRAPHS, footnote="Note."),
            "a.odt": make_odt("Title", PARAGRAPHS, note="Note."), "a.epub": make_epub(PARAGRAPHS),
            "a.rtf": b"{\\rtf1\\ansi{\\fonttbl\\f0 Arial;}\\f0 Otters {\\b return}\\par Caf\\'e9.}",
            "a.md": b"# Otters\n\n*Salmon* [rise](http://x.org).\n", "a.rst": b"Otters\n======\n\n:ref:`Salmon <s>` rise.\n",
        })
    return _VALID[name]


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(["a.pdf", "a.docx", "a.odt", "a.epub", "a.rtf", "a.md", "a.rst"]),
    cut=st.floats(0, 1),
    noise=st.binary(max_size=64),
    at=st.floats(0, 1),
)
def test_truncated_and_corrupted_documents_fail_cleanly(name: str, cut: float, noise: bytes, at: float) -> None:
    data = valid_sample(name)
    check_extract(data[: int(len(data) * cut)], name)
    spot = int(len(data) * at)
    check_extract(data[:spot] + noise + data[spot + len(noise):], name)


@settings(max_examples=40, deadline=None)
@given(header=st.sampled_from([b"%PDF-1.7\n", b"PK\x03\x04", b"{\\rtf1 ", b"<!DOCTYPE html><html>"]), tail=st.binary(max_size=512))
def test_random_bytes_behind_a_valid_header_fail_cleanly(header: bytes, tail: bytes) -> None:
    for name in ("x.pdf", "x.docx", "x.odt", "x.epub", "x.rtf", "x.txt"):
        check_extract(header + tail, name)


def test_location_spans() -> None:
    from coderiv.text.formats import LocationMap

    places = LocationMap((0, 10, 20, 30), ("paragraph 1", "paragraph 2", "paragraph 3", "footnote 1"))
    assert [places.at(o) for o in (0, 9, 10, 35)] == ["paragraph 1", "paragraph 1", "paragraph 2", "footnote 1"]
    assert places.span(2, 10) == "paragraph 1"  # end is exclusive
    assert places.span(5, 25) == "paragraph 1-3"
    assert places.span(15, 31) == "paragraph 2 to footnote 1"
    assert LocationMap().span(0, 5) is None


def test_an_index_read_with_older_extraction_is_read_again(tmp_path: Path) -> None:
    import json

    from coderiv import Index

    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "guide.md").write_text("See [the guide](https://example.org/guide) for rivers.")
    Index.update_from(folder, tmp_path / "i", workers=1)
    manifest_path = Index.open(tmp_path / "i").generation / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["extraction"] == 2
    del manifest["extraction"]  # as an index built before documents were read by format
    manifest_path.write_text(json.dumps(manifest))
    report = Index.update_from(folder, tmp_path / "i", workers=1)
    assert report.rebuilt == "documents are read differently now (PDF, Word, Markdown, reStructuredText…)"
    assert Index.open(tmp_path / "i").manifest["extraction"] == 2
