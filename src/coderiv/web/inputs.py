"""Turning a request's upload or pasted text into a query document, with the CLI's checks
(:func:`coderiv.text.reading.read_query_bytes`). Nothing from the request reaches the file
system: the upload is read into memory and its file name is only a label."""

from __future__ import annotations

from pathlib import PurePosixPath

from starlette.datastructures import UploadFile

from coderiv.errors import InputError
from coderiv.text.reading import QueryDocument, read_query_bytes

PASTED_LABEL = "pasted text"


def display_name(filename: str | None) -> str:
    """The last component of an uploaded file's name (browsers may send a whole path)."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
    return name or "upload"


async def query_document(file: UploadFile | None, text: str | None, max_bytes: int) -> QueryDocument:
    """The query from an uploaded file, or else from pasted text; one-line errors otherwise."""
    if file is not None and file.filename:
        label = display_name(file.filename)
        data = await file.read()  # bounded: the body limit stopped a larger request
        if not data:
            raise InputError(f"{label} is empty")
        return read_query_bytes(data, label, max_bytes)
    if text is not None and text.strip():
        return read_query_bytes(text.encode("utf-8"), PASTED_LABEL, max_bytes)
    raise InputError("give a document: upload a file or paste its text")
