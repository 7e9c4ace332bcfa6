"""One small registry type for every set of named things (measures, key kinds, fingerprint
strategies, pair methods, evaluation methods): a read-only mapping from name to value whose
``get`` raises an error naming the bad value and the choices (attrs' validator style). The CLI
takes its choices and help from the same registries, so a name is never listed in two places."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any, Generic, TypeVar, overload

from coderiv.errors import UnknownNameError

T = TypeVar("T")
D = TypeVar("D")
_REQUIRED: Any = object()


class Registry(MutableMapping[str, T], Generic[T]):
    """Named values of one kind; ``what`` names the kind in error messages ("measure")."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}

    def add(self, name: str, value: T) -> T:
        """Register ``value`` under ``name`` (a repeated name is a programming error)."""
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._items[name] = value
        return value

    @overload
    def get(self, name: str) -> T: ...

    @overload
    def get(self, name: str, default: D) -> T | D: ...

    def get(self, name: str, default: Any = _REQUIRED) -> Any:
        """The value called ``name``, or :class:`UnknownNameError` listing the choices (with a
        ``default``, that instead, as ``dict.get``)."""
        try:
            return self._items[name]
        except KeyError:
            if default is not _REQUIRED:
                return default
            raise UnknownNameError(f"{self.what} must be one of {self.names()!r} (got {name!r})") from None

    def names(self) -> list[str]:
        """The registered names, sorted (the CLI's choices)."""
        return sorted(self._items)

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __setitem__(self, name: str, value: T) -> None:
        """Replace or add an entry (tests; plug-ins should use :meth:`add`)."""
        self._items[name] = value

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
