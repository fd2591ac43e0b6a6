"""Documents a person gives Navi: read (`extract/`), cut into placed chunks (`chunking.py`), indexed
per user, searched and cited. See docs/documents.md."""
