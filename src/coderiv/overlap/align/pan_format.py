"""PAN's text-alignment XML: one file per (suspicious, source) pair (PAN 2012-2015).

::

    <document reference="suspicious-document00005.txt">
    <feature name="detected-plagiarism" this_offset="3593" this_length="698"
             source_reference="source-document01090.txt" source_offset="1300" source_length="698"/>
    </document>

Offsets and lengths count characters of the raw decoded files. The truth uses
``name="plagiarism"`` and may name an ``obfuscation`` (none, random, translation, summary...)
and a ``type``; detections use ``name="detected-plagiarism"``. The file of a pair is named
``suspicious-documentXXXXX-source-documentYYYYY.xml`` (:func:`pair_file_name`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path, PurePath
from urllib.parse import quote

from coderiv.errors import CoderivError, InputError

DETECTED = "detected-plagiarism"
PLAGIARISM = "plagiarism"


@dataclass(frozen=True)
class Feature:
    """One case or detection: characters [this_offset, this_offset + this_length) of the
    document ``this_reference`` against [source_offset, + source_length) of ``source_reference``.
    ``also_in``: other documents holding the same text (versions of the source), written as
    ``<version reference="..."/>`` elements inside the feature, which PAN's evaluators ignore."""

    this_reference: str
    this_offset: int
    this_length: int
    source_reference: str
    source_offset: int
    source_length: int
    name: str = DETECTED
    obfuscation: str | None = None
    type: str | None = None
    also_in: tuple[str, ...] = ()

    @property
    def this_end(self) -> int:
        return self.this_offset + self.this_length

    @property
    def source_end(self) -> int:
        return self.source_offset + self.source_length


def _file_part(name: str) -> str:
    """A document's name as a part of a file name: its path without the last suffix, with every
    character other than letters, digits and ``-_.`` percent-encoded (a ``/`` becomes ``%2F``),
    so that PAN's flat names are kept as they are and two paths never give the same part."""
    return quote(PurePath(name).with_suffix("").as_posix(), safe="-_.")


def pair_file_name(susp: str, src: str) -> str:
    """``suspicious-document00005-source-document01090.xml`` for the pair's two names as the pairs
    file gives them; a name with folders keeps them, encoded (``django-3.0/docs/index.txt`` gives
    ``django-3.0%2Fdocs%2Findex``), so that two releases' ``index.txt`` get two files."""
    return f"{_file_part(susp)}-{_file_part(src)}.xml"


def to_xml(reference: str, features: list[Feature]) -> str:
    """The XML of one document's features (attribute order as PAN's files)."""
    root = ET.Element("document", reference=reference)
    for f in features:
        attrs = {"name": f.name}
        if f.obfuscation is not None:
            attrs["obfuscation"] = f.obfuscation
        if f.type is not None:
            attrs["type"] = f.type
        attrs.update(
            this_offset=str(f.this_offset), this_length=str(f.this_length), source_reference=f.source_reference,
            source_offset=str(f.source_offset), source_length=str(f.source_length),
        )
        feature = ET.SubElement(root, "feature", attrs)
        for other in f.also_in:
            ET.SubElement(feature, "version", reference=other)
    ET.indent(root, "")
    return ET.tostring(root, encoding="unicode") + "\n"


def write_pair(out_dir: Path, susp: str, src: str, features: list[Feature], file_name: str | None = None) -> Path:
    """Write the pair's file into ``out_dir`` (created if missing), named ``file_name`` or
    :func:`pair_file_name`; return its path. The document reference is ``susp`` as given."""
    path = out_dir / (file_name or pair_file_name(susp, src))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(to_xml(susp, features), "utf-8")
    except OSError as exc:
        raise CoderivError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def parse_xml(text: str, label: str, names: frozenset[str] = frozenset({PLAGIARISM, DETECTED})) -> list[Feature]:
    """The features of one PAN XML (those whose ``name`` is in ``names``)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(f"{label}: not PAN XML ({exc})") from None
    reference = root.get("reference")
    if root.tag != "document" or not reference:
        raise InputError(f"{label}: expected <document reference=...>")
    features = []
    for node in root.iter("feature"):
        if node.get("name") not in names:
            continue
        try:
            features.append(Feature(
                reference, int(node.get("this_offset", "")), int(node.get("this_length", "")),
                node.get("source_reference") or "", int(node.get("source_offset", "")),
                int(node.get("source_length", "")), node.get("name", DETECTED), node.get("obfuscation"),
                node.get("type"), tuple(v.get("reference", "") for v in node.iter("version")),
            ))
        except ValueError:
            raise InputError(f"{label}: a feature without integer offsets and lengths") from None
    return features


def read_pair(path: Path) -> list[Feature]:
    """The features of one PAN XML file."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_xml(text, str(path))


def read_folder(folder: Path) -> dict[str, list[Feature]]:
    """Every ``*.xml`` of a folder: file name -> its features."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder")
    return {p.name: read_pair(p) for p in sorted(folder.glob("*.xml"))}


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """The pairs file of PAN's interface: ``SUSP SRC`` a line (blank lines skipped)."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected 'SUSPICIOUS SOURCE' (two file names)")
        pairs.append((fields[0], fields[1]))
    return pairs


def read_raw(path: Path) -> str:
    """A document as PAN counts its characters: the file's bytes decoded as UTF-8, newlines kept
    as they are (undecodable bytes become U+FFFD, one character each)."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
