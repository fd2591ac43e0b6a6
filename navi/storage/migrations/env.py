"""Alembic environment: always run programmatically by `navi.storage.migrate` on a live connection."""

from __future__ import annotations

from alembic import context

from navi.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("Navi's migrations run through navi.storage.migrate.upgrade(), not the alembic CLI")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
