"""Alembic's environment for the archive: run on the connection :func:`coderiv.archive.db.migrate`
passes in (never from an ini file or the command line)."""

from __future__ import annotations

from alembic import context

from coderiv.archive.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only coderiv.archive.db.migrate runs these migrations
    raise RuntimeError("the archive's migrations run through coderiv.archive.db.migrate")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
