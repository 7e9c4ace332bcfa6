"""What every route shares: the server's settings, the index snapshots, the worker pool and the
jobs of the web page. One :class:`WebContext` per application, kept in ``app.state``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from coderiv.text.isolated import Budget
from coderiv.web.jobs import JobStore
from coderiv.web.pool import WorkPool
from coderiv.web.snapshot import IndexSnapshots

if TYPE_CHECKING:  # the archive needs coderiv[archive]; imported only when it is on
    from coderiv.archive.service import Archive, ArchiveSettings

#: Default upload limit (bytes): a long thesis as text is a few MB; 50 MB leaves room for HTML.
DEFAULT_MAX_UPLOAD = 50 * 1024 * 1024


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs: its index, token, upload limit and worker pool size; ``hosts``, when
    given, are the only host names requests may be addressed to (see :class:`~coderiv.web.security.HostCheck`);
    ``read_budget`` is what reading one uploaded file may cost (:mod:`coderiv.text.isolated`);
    ``archive``, when given, turns the archive on (users, stored submissions; docs/archive.md)."""

    index_dir: Path
    token: str | None = None
    hosts: tuple[str, ...] | None = None
    max_upload: int = DEFAULT_MAX_UPLOAD
    workers: int | None = None
    queue: int | None = None
    read_budget: Budget = Budget()
    archive: ArchiveSettings | None = None


@dataclass
class WebContext:
    settings: ServeSettings
    snapshots: IndexSnapshots
    pool: WorkPool
    jobs: JobStore = field(default_factory=JobStore)
    archive: Archive | None = None

    @classmethod
    def create(cls, settings: ServeSettings) -> WebContext:
        archive = None
        if settings.archive is not None:
            from coderiv.archive.service import Archive

            archive = Archive(settings.archive, settings.index_dir, settings.read_budget, settings.max_upload)
        return cls(settings, IndexSnapshots(settings.index_dir), WorkPool(settings.workers, settings.queue), archive=archive)
