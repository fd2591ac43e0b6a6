"""The documents store's rows: columns, conversions to the shared model, and the small statements
every part of `navi.storage.documents` uses."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, insert, select

from navi.documents.base import Chunk, Collection, Document
from navi.llm.messages import utcnow
from navi.sessions.models import as_utc
from navi.storage.schema import sessions
from navi.storage.schema_documents import doc_collections, doc_profile_collections, documents

D = documents.c
C = doc_collections.c
DOCUMENT_COLUMNS = [c for c in documents.c if not c.name.startswith("lease_")]
COUNT = (
    select(func.count())
    .select_from(documents)
    .where(D.collection_id == C.id)
    .scalar_subquery()
    .label("documents")
)


def to_collection(row: Any) -> Collection:
    return Collection(
        id=row.id,
        owner=row.owner,
        name=row.name,
        kind=row.kind,
        session_id=row.session_id,
        path=row.path,
        created_at=as_utc(row.created_at),
        documents=int(row.documents),
    )


def to_document(row: Any) -> Document:
    return Document(
        id=row.id,
        owner=row.owner,
        collection_id=row.collection_id,
        name=row.name,
        kind=row.kind,
        size=row.size,
        sha256=row.sha256,
        source=row.source,
        path=row.path,
        state=row.state,
        progress=row.progress,
        error=row.error,
        pages=row.pages,
        chunks=row.chunks,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        warnings=_warnings(row.warnings),
    )


def _warnings(raw: str | None) -> list[str]:
    try:
        found = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [str(w) for w in found] if isinstance(found, list) else []


def new_id() -> str:
    return uuid.uuid4().hex


def session_owner(conn: Connection, session_id: str) -> str | None:
    return conn.execute(select(sessions.c.owner).where(sessions.c.id == session_id)).scalar()


def collections_where(conn: Connection, *conditions: Any) -> list[Collection]:
    rows = conn.execute(select(doc_collections, COUNT).where(*conditions).order_by(C.created_at, C.name))
    found = [to_collection(r) for r in rows]
    if found:
        P = doc_profile_collections.c
        links = conn.execute(
            select(P.collection_id, P.profile_id)
            .where(P.collection_id.in_([c.id for c in found]))
            .order_by(P.profile_id)
        )
        by_id = {c.id: c for c in found}
        for collection_id, profile_id in links:
            by_id[collection_id].profiles.append(profile_id)
    return found


def insert_collection(conn: Connection, made: Collection) -> None:
    values = {name: getattr(made, name) for name in doc_collections.c.keys()}  # noqa: SIM118 (column names)
    conn.execute(insert(doc_collections).values(**values))


def queued() -> dict[str, Any]:
    """A document's columns when it is queued again."""
    return {
        "state": "queued",
        "progress": 0.0,
        "error": None,
        "warnings": None,
        "lease_worker": None,
        "lease_until": None,
        "lease_seconds": None,
        "updated_at": utcnow(),
    }


def chunk_rows(document_id: str, owner: str, chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    return [
        {
            "document_id": document_id,
            "owner": owner,
            "ordinal": chunk.ordinal,
            "page": chunk.place.page,
            "slide": chunk.place.slide,
            "sheet": chunk.place.sheet,
            "cells": chunk.place.cells,
            "headings": json.dumps(list(chunk.place.headings), ensure_ascii=False),
            "text": chunk.text,
        }
        for chunk in chunks
    ]
