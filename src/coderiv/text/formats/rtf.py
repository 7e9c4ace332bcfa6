"""RTF: control words and groups removed by striprtf, leaving the text as typed."""

from __future__ import annotations

from typing import Any

from coderiv.extras import require
from coderiv.text.formats.base import Extracted, ExtractionError
from coderiv.text.formats.plain import decode


def read_rtf(data: bytes) -> Extracted:
    """The visible text of an RTF document (RTF is 7-bit; other code points come as escapes)."""
    striprtf: Any = require("striprtf.striprtf", "formats", "reading RTF")
    decoded = decode(data)
    try:
        text: str = striprtf.rtf_to_text(decoded.text, errors="replace")
    except Exception as exc:  # striprtf raises plain errors on malformed escapes
        raise ExtractionError(f"corrupt RTF ({type(exc).__name__}: {exc})") from None
    return Extracted(text, "rtf", decoded.lossy)
