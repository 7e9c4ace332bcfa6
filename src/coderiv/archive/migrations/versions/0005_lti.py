"""LTI 1.3 (issue 42 item 5): registered platforms, OIDC logins in flight (state and nonce,
used once), the tool's signing key, validated launches, and a submission's launch and the
return of its score.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("client_id", sa.String(255), nullable=False),
        sa.Column("deployment_id", sa.String(255), nullable=True),
        sa.Column("login_url", sa.Text, nullable=False),
        sa.Column("token_url", sa.Text, nullable=False),
        sa.Column("jwks_url", sa.Text, nullable=False),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.UniqueConstraint("issuer", "client_id"),
    )
    op.create_table(
        "lti_nonces",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("platform_id", sa.Integer, sa.ForeignKey("lti_platforms.id", ondelete="CASCADE"), nullable=False),
        sa.Column("state", sa.String(64), nullable=False, unique=True),
        sa.Column("nonce", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.Column("used", sa.DateTime, nullable=True),
    )
    op.create_table(
        "lti_keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kid", sa.String(64), nullable=False, unique=True),
        sa.Column("private_pem", sa.Text, nullable=False),
        sa.Column("created", sa.DateTime, nullable=False),
    )
    op.create_table(
        "lti_launches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("platform_id", sa.Integer, sa.ForeignKey("lti_platforms.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("sub", sa.String(255), nullable=False),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("context_id", sa.String(255), nullable=True),
        sa.Column("resource_link", sa.String(255), nullable=True),
        sa.Column("lineitem", sa.Text, nullable=True),
        sa.Column("memberships", sa.Text, nullable=True),
        sa.Column("created", sa.DateTime, nullable=False),
    )
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("lti_launch_id", sa.Integer, nullable=True))
        batch.add_column(sa.Column("lti_score_sent", sa.DateTime, nullable=True))
        batch.add_column(sa.Column("lti_score_error", sa.Text, nullable=True))
        batch.create_foreign_key("fk_submissions_lti_launch", "lti_launches", ["lti_launch_id"], ["id"], ondelete="SET NULL")


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("fk_submissions_lti_launch", type_="foreignkey")
        for column in ("lti_score_error", "lti_score_sent", "lti_launch_id"):
            batch.drop_column(column)
    for table in ("lti_launches", "lti_keys", "lti_nonces", "lti_platforms"):
        op.drop_table(table)
