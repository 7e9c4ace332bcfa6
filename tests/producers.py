"""PDFs made by real producers for the tests: pandoc writes an ODT (from reStructuredText or
Markdown), its page is narrowed and hyphenation switched on or off, and LibreOffice lays it out
and exports the PDF. Tests skip with one line when either program is absent (.ci/run installs
them: ``apt-get install -y --no-install-recommends libreoffice-writer-nogui pandoc hyphen-en-us``)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

MISSING = [tool for tool in ("soffice", "pandoc") if shutil.which(tool) is None]
needs_producers = pytest.mark.skipif(
    bool(MISSING), reason=f"needs {' and '.join(MISSING)} (apt-get install libreoffice-writer-nogui pandoc hyphen-en-us)"
)


def _restyle(odt: bytes, width: str, height: str, hyphenate: bool) -> bytes:
    """The ODT with a narrower page (so many words meet a line end) and hyphenation on or off."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(odt)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "styles.xml":
                text = data.decode()
                text = re.sub(r'fo:page-width="[^"]*"', f'fo:page-width="{width}"', text)
                text = re.sub(r'fo:page-height="[^"]*"', f'fo:page-height="{height}"', text)
                text = re.sub(r'(fo:margin-(?:left|right|top|bottom))="1in"', r'\1="0.4in"', text)
                flag = "true" if hyphenate else "false"
                text = re.sub(r'\s*fo:hyphenate="[^"]*"', "", text)
                text = text.replace('fo:language="en" fo:country="US"', f'fo:language="en" fo:country="US" fo:hyphenate="{flag}"')
                data = text.encode()
            kind = zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED
            dst.writestr(info, data, compress_type=kind)
    return out.getvalue()


def libreoffice_pdf(source: Path, work: Path, *, source_format: str = "rst", width: str = "4in",
                    height: str = "6in", hyphenate: bool = False) -> bytes:
    """``source`` through pandoc (to ODT) and LibreOffice (to PDF), on a ``width`` page."""
    work.mkdir(parents=True, exist_ok=True)
    odt = work / (source.stem + ".odt")
    subprocess.run(["pandoc", "-f", source_format, "-t", "odt", "-o", str(odt), str(source)], check=True, capture_output=True)
    odt.write_bytes(_restyle(odt.read_bytes(), width, height, hyphenate))
    profile = (work / "lo-profile").resolve()
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf", "--outdir", str(work), str(odt)],
        check=True, capture_output=True, timeout=300,
    )
    return (work / (source.stem + ".pdf")).read_bytes()
