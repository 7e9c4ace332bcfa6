"""Document formats: PDFium (pypdfium2, what coderiv uses) against pdfminer.six on a few real
PDFs, and extraction throughput of every format (MB/s, pages/s).

The PDFs: two manuals shipped with Debian (/usr/share/doc: a Texinfo/TeX manual with running
heads and hyphenation, a DocBook specification) when present, and two made here with fpdf2 from
the bundled example texts, whose true text is known: a one-column "thesis" with a running
header, page-number footers and justified lines, and a two-column "paper". Quality: recall of
the true text's word 5-grams in extraction order (reading order and hyphenation), running
header lines left in, and the two extractors' agreement on words.

    python benchmarks/bench_formats.py        # needs coderiv[formats], fpdf2, python-docx, odfpy; pdfminer.six optional
"""

from __future__ import annotations

import io
import os
import re
import resource
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from coderiv.text.formats import extract
from coderiv.text.formats.pdf import page_lines
from common import machine

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "coderiv" / "data" / "example"
SYSTEM_PDFS = [Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"), Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")]
HEADER = "University of Testing - Department of Rivers - Thesis Series"
_WORD = re.compile(r"\w+")


def source_paragraphs() -> list[str]:
    """The example collection's paragraphs, Latin-1 only (fpdf2's core fonts)."""
    paragraphs = []
    for path in sorted(EXAMPLE.glob("*.txt")):
        for block in path.read_text().split("\n\n"):
            text = " ".join(block.split())
            if text and text.encode("latin-1", "ignore").decode("latin-1") == text:
                paragraphs.append(text)
    return paragraphs


def thesis_pdf(paragraphs: list[str]) -> bytes:
    from fpdf import FPDF

    class Thesis(FPDF):  # type: ignore[misc]
        def header(self) -> None:
            self.set_font("Times", size=9)
            self.cell(0, 8, HEADER, new_x="LMARGIN", new_y="NEXT")

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Times", size=9)
            self.cell(0, 8, f"Page {self.page_no()}", align="C")

    pdf = Thesis()
    pdf.set_font("Times", size=12)
    pdf.add_page()
    for text in paragraphs:
        pdf.multi_cell(0, 6, text, align="J", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    return bytes(pdf.output())


def two_column_pdf(paragraphs: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    pdf.add_page()
    with pdf.text_columns(ncols=2, gutter=8, text_align="J") as columns:
        for text in paragraphs:
            columns.write(text + "\n\n")
    return bytes(pdf.output())


def pdfminer_text(data: bytes) -> str | None:
    try:
        from pdfminer.high_level import extract_text
    except ImportError:
        return None
    return str(extract_text(io.BytesIO(data)))


def ngrams(words: list[str], n: int = 5) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def recall(truth: str, text: str) -> float:
    expected = ngrams(_WORD.findall(truth.lower()))
    found = ngrams(_WORD.findall(text.lower()))
    return 100 * sum((expected & found).values()) / max(sum(expected.values()), 1)


def agreement(a: str, b: str) -> float:
    wa, wb = Counter(_WORD.findall(a.lower())), Counter(_WORD.findall(b.lower()))
    return 100 * sum((wa & wb).values()) / max(sum((wa | wb).values()), 1)


def timed(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare_pdf_extractors(paragraphs: list[str]) -> None:
    truth = "\n\n".join(paragraphs)
    samples: list[tuple[str, bytes, str | None]] = [(p.name, p.read_bytes(), None) for p in SYSTEM_PDFS if p.exists()]
    samples.append(("thesis (fpdf2)", thesis_pdf(paragraphs), truth))
    samples.append(("two columns (fpdf2)", two_column_pdf(paragraphs[:40]), "\n\n".join(paragraphs[:40])))
    print("\nPDF extractors: seconds (best of 3), pages/s, 5-gram recall of the true text, header lines left, word agreement")
    print(f"{'pdf':28} {'pages':>5} {'KB':>5} | {'pdfium raw':>10} {'coderiv':>8} {'pages/s':>8} {'recall':>7} {'heads':>5} | "
          f"{'pdfminer':>8} {'pages/s':>8} {'recall':>7} {'heads':>5} | {'agree':>6}")
    for name, data, known in samples:
        raw_s, _ = timed(lambda data=data: page_lines(data))
        ours_s, ours = timed(lambda data=data: extract(data, "x.pdf"))
        pages = len(ours.locations)  # type: ignore[attr-defined]
        text = ours.text  # type: ignore[attr-defined]
        miner_s, miner = timed(lambda data=data: pdfminer_text(data), repeat=1)
        heads = text.count(HEADER)
        line = (f"{name:28} {pages:5d} {len(data) // 1024:5d} | {raw_s:10.3f} {ours_s:8.3f} {pages / ours_s:8.0f} "
                f"{recall(known, text) if known else float('nan'):6.1f}% {heads:5d} | ")
        if isinstance(miner, str):
            line += (f"{miner_s:8.3f} {pages / miner_s:8.0f} {recall(known, miner) if known else float('nan'):6.1f}% "
                     f"{miner.count(HEADER):5d} | {agreement(text, miner):5.1f}%")
        else:
            line += "pdfminer.six not installed"
        print(line)


def docx_bytes(paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def odt_bytes(paragraphs: list[str]) -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    for text in paragraphs:
        document.text.addElement(P(text=text))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def epub_bytes(paragraphs: list[str]) -> bytes:
    out = io.BytesIO()
    chapters = [paragraphs[i : i + 20] for i in range(0, len(paragraphs), 20)]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", '<container><rootfiles><rootfile full-path="b.opf"/></rootfiles></container>')
        items = "".join(f'<item id="c{i}" href="c{i}.xhtml"/>' for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        book.writestr("b.opf", f"<package><manifest>{items}</manifest><spine>{spine}</spine></package>")
        for i, chapter in enumerate(chapters):
            book.writestr(f"c{i}.xhtml", "<html><body>" + "".join(f"<p>{p}</p>" for p in chapter) + "</body></html>")
    return out.getvalue()


def throughput(paragraphs: list[str]) -> None:
    text = "\n\n".join(paragraphs)
    documents = {
        "text": text.encode(), "html": ("<html><body>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>").encode(),
        "markdown": "\n\n".join(f"Some *{p}*" for p in paragraphs).encode(), "rst": text.encode(),
        "rtf": ("{\\rtf1\\ansi " + "\\par ".join(paragraphs) + "}").encode(), "docx": docx_bytes(paragraphs),
        "odt": odt_bytes(paragraphs), "epub": epub_bytes(paragraphs), "pdf": thesis_pdf(paragraphs),
    }
    suffix = {"text": "txt", "markdown": "md"}
    print(f"\nthroughput on the same {len(text) / 1e3:.0f} KB of text ({len(paragraphs)} paragraphs) in each format")
    print(f"{'format':9} {'file KB':>8} {'seconds':>8} {'file MB/s':>9} {'text MB/s':>9} {'pages/s':>8}")
    for fmt, data in documents.items():
        seconds, result = timed(lambda data=data, fmt=fmt: extract(data, f"x.{suffix.get(fmt, fmt)}"))
        pages = f"{len(result.locations) / seconds:8.0f}" if fmt == "pdf" else f"{'':>8}"  # type: ignore[attr-defined]
        print(f"{fmt:9} {len(data) / 1e3:8.0f} {seconds:8.3f} {len(data) / 1e6 / seconds:9.1f} {len(text) / 1e6 / seconds:9.1f} {pages}")


def index_pdfs(paragraphs: list[str], copies: int = 200) -> None:
    """``coderiv index`` of a folder of PDFs with one worker process and with every core."""
    import shutil
    import tempfile

    from coderiv.index.builder.analysis_workers import default_workers
    from coderiv.index.index import Index

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for n in range(copies):
            (folder / f"thesis-{n:03d}.pdf").write_bytes(thesis_pdf(paragraphs[n % 7 :: 3]))
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"\ncoderiv index of {copies} PDFs ({size / 1e6:.1f} MB)")
        for workers in sorted({1, default_workers()}):
            shutil.rmtree(Path(tmp) / "idx", ignore_errors=True)
            start, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            report = Index.update_from(folder, Path(tmp) / "idx", workers=workers)
            seconds = time.perf_counter() - start
            child_cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - children
            print(f"  {workers} worker(s): {seconds:.2f} s, {size / 1e6 / seconds:.1f} MB/s, {report.n_docs} indexed, "
                  f"{child_cpu:.2f} s CPU in worker processes, load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    print(f"machine: {machine()}")
    paragraphs = source_paragraphs()
    compare_pdf_extractors(paragraphs)
    throughput(paragraphs * 4)
    index_pdfs(paragraphs)


if __name__ == "__main__":
    main()
