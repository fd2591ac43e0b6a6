"""Database plumbing shared by the session and memory stores (SQLite by default, PostgreSQL by URL)."""
