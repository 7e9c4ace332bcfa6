"""Webhook deliveries are recorded in the database and sent by the server, off the check
workers, with retries and backoff (issue 44).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_at", sa.DateTime, nullable=False, index=True),
        sa.Column("sender", sa.String(100), nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("delivered", sa.DateTime, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("notifications")
