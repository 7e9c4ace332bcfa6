"""Sources with names and repository modes (issue 42): a submission records its author and title
(shown with it when it is a later thesis's source), the repository mode it was checked under
(all, archived, none) and when it joined the collection as a pending source (mode all).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("author", sa.String(200), nullable=True))
        batch.add_column(sa.Column("title", sa.String(500), nullable=True))
        batch.add_column(sa.Column("repository", sa.String(16), nullable=False, server_default="archived"))
        batch.add_column(sa.Column("pooled", sa.DateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        for column in ("pooled", "repository", "title", "author"):
            batch.drop_column(column)
