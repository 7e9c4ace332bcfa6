"""The archive (``coderiv serve --archive``; docs/archive.md): submissions, their checks, decisions,
users and an audit log kept in a database (SQLite beside the index, or PostgreSQL by URL), a
queue checked by worker processes that survives restarts, and one writer that adds archived
submissions to the indexed collection. Needs ``coderiv[archive]`` (SQLAlchemy 2, Alembic).

Modules, one concept each: :mod:`.db` (engine, sessions, migrations), :mod:`.models` (tables),
:mod:`.users` (tokens and roles), :mod:`.queue` (states and leases), :mod:`.checker` (one
check), :mod:`.worker` (a worker process), :mod:`.workers` (the bounded pool of them),
:mod:`.writer` (archiving into the index and the pair table), :mod:`.retention` (expiry,
deletion, export), :mod:`.audit` (who did what, when), :mod:`.webhook` (which URL may be told,
one POST within a deadline), :mod:`.notifications` (the deliveries' queue and sender)."""
