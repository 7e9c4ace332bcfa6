"""The archive's first schema: users, submissions, checks, decisions, document matches and
views, audit log.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.Column("revoked", sa.DateTime, nullable=True),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created", sa.DateTime, nullable=False, index=True),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("lease_until", sa.DateTime, nullable=True),
        sa.Column("worker", sa.String(100), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("overall", sa.Float, nullable=True),
        sa.Column("top_source", sa.Text, nullable=True),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("archive_requested", sa.Boolean, nullable=False),
        sa.Column("archived_doc", sa.Text, nullable=True),
        sa.Column("archived", sa.DateTime, nullable=True),
        sa.Column("archive_error", sa.Text, nullable=True),
    )
    op.create_table(
        "checks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("started", sa.DateTime, nullable=False),
        sa.Column("finished", sa.DateTime, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("worker", sa.String(100), nullable=True),
        sa.Column("generation", sa.String(100), nullable=True),
        sa.Column("coderiv_version", sa.String(40), nullable=True),
        sa.Column("overall", sa.Float, nullable=True),
        sa.Column("ranking_json", sa.Text, nullable=True),
        sa.Column("report_json", sa.Text, nullable=True),
        sa.Column("report_html", sa.Text, nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.String(32), sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created", sa.DateTime, nullable=False),
    )
    op.create_table(
        "document_matches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("doc", sa.String(1000), nullable=False, index=True),
        sa.Column("match", sa.String(1000), nullable=False),
        sa.Column("percent", sa.Float, nullable=False),
        sa.Column("found", sa.DateTime, nullable=False),
        sa.UniqueConstraint("doc", "match"),
    )
    op.create_table(
        "document_views",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("doc", sa.String(1000), nullable=False),
        sa.Column("seen", sa.DateTime, nullable=False),
        sa.UniqueConstraint("user_id", "doc"),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", sa.DateTime, nullable=False, index=True),
        sa.Column("user_name", sa.String(100), nullable=True),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("target", sa.String(1000), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("audit", "document_views", "document_matches", "decisions", "checks", "submissions", "users"):
        op.drop_table(table)
