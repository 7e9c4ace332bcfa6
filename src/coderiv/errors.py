"""Errors coderiv raises on purpose: each carries a message fit to show a user as it is."""

from __future__ import annotations


class CoderivError(Exception):
    """Base class: the CLI prints the message and exits non-zero, never a traceback."""


class IndexNotFoundError(CoderivError):
    """No index exists at the given location."""


class CorruptIndexError(CoderivError):
    """The index exists but its files are missing, truncated or inconsistent."""


class AnalysisMismatchError(CoderivError):
    """A query was to be analysed with settings other than the index's."""


class UnknownNameError(CoderivError, ValueError):
    """A measure, strategy or method name that no registry knows."""


class IndexBusyError(CoderivError):
    """Another process holds the index's write lock (it is updating the index)."""


class InputError(CoderivError):
    """A document or folder that cannot be read as text."""


class MissingExtraError(CoderivError, ImportError):
    """A feature needs an optional dependency group (an extra) that is not installed."""


class NotFoundError(CoderivError):
    """A thing asked for by id that is not there, or that the asker may not see (one answer for
    both, so nobody learns whether another's exists): HTTP 404."""


class ForbiddenError(CoderivError):
    """The asker's role may not do this: HTTP 403."""
