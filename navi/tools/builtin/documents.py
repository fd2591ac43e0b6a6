"""`search_documents`: the agent searches the documents the user gave Navi (issue 43).

The run's owner's documents only, all of them or one collection's or one document's (each named
by name or id; another user's are as unknown as ones that do not exist). Hits come ranked, best
first, each with its citation ("contract.pdf, p. 12, § 9 Termination"), the start of its text,
and the key `recall` reads the whole passage with (`doc_<chunk id>`). Hybrid when memory's
embedder is wired (navi/documents/retrieval.py).
"""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.documents.base import Hit
from navi.documents.retrieval import Retrieval, quoted, recall_key, short_citation
from navi.tools.base import Tool, ToolResult

SNIPPET = 500  # characters of each hit's text shown; recall reads the rest


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= SNIPPET:
        return text
    cut = text[:SNIPPET]
    return cut[: cut.rfind(" ") if " " in cut[SNIPPET // 2 :] else SNIPPET].rstrip() + " …"


def render(query: str, hits: list[Hit]) -> str:
    """The hits as the model reads them (also the MCP server's text)."""
    lines = [f"{len(hits)} passage(s) for “{query}”, best first:"]
    for n, hit in enumerate(hits, start=1):
        head = f"[{n}] {quoted(hit.citation())} — recall key {recall_key(hit.chunk_id)}"
        lines.append(f"\n{head}\n{quoted(_snippet(hit.text))}")
    lines.append(f"\nCite a passage you use like {short_citation(hits[0])}; recall a key for its whole text.")
    return "\n".join(lines)


class SearchDocumentsTool(Tool):
    name = "search_documents"
    description = (
        "Search the user's documents (PDFs, notes, spreadsheets…) for passages: each comes with its "
        "citation (name, page) and a recall key for the whole passage. `collection`/`document`: "
        "name or id, to search only there."
    )
    keywords = ("document", "documents", "pdf", "contract", "my files", "according to", "the file says")
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "collection": {"type": "string", "minLength": 1},
            "document": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    timeout = 30.0

    def __init__(self, retrieval: Retrieval) -> None:
        self.retrieval = retrieval

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        owner = ctx.owner if ctx else "local"
        query = params["query"].strip()
        if not query:
            return ToolResult.fail("query is empty: say what to look for")
        collections = documents = None
        if params.get("collection"):
            found = await self.retrieval.collection(owner, params["collection"])
            if found is None:
                names = [c.name for c in await self.retrieval.store.list_collections(owner)]
                known = f"; the user's collections: {', '.join(names)}" if names else "; the user has none"
                return ToolResult.fail(f"no collection '{params['collection']}'{known}")
            collections = [found.id]
        if params.get("document"):
            doc = await self.retrieval.document(
                owner, params["document"], collections[0] if collections else None
            )
            if doc is None:
                return ToolResult.fail(
                    f"no document '{params['document']}'; search without `document` to find it"
                )
            documents = [doc.id]
        hits = await self.retrieval.search(
            owner, query, collections=collections, documents=documents, limit=params.get("limit", 5)
        )
        if not hits:
            return ToolResult.ok(f"No passage of the user's documents matches “{query}”.")
        return ToolResult.ok(render(query, hits))
