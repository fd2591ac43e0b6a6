"""Everything SQL: the one `Database` (SQLite by default, PostgreSQL by URL), the schema, the
migrations, and every SQL store, built together by `stores.build_stores`.

Each store implements the interface of the package it stores for (`sessions`, `memory`,
`schedules`, `users`, `agent.grants`); nothing outside this package and the composition root
imports SQLAlchemy for its data.
"""
