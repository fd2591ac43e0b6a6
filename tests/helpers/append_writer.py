"""Appends turns to one session forever, printing `ok N` after each append returns.

Used by the durability test, which kills this process with SIGKILL at random moments.
Usage: python -m tests.helpers.append_writer DB_PATH SESSION_ID
"""

from __future__ import annotations

import asyncio
import sys

from navi.llm.messages import Message
from navi.storage.database import Database, sqlite_url
from navi.storage.sessions import SqlSessionStore


async def main(db_path: str, session_id: str) -> None:
    store = SqlSessionStore(Database(sqlite_url(db_path)))  # migrated by the test
    session = await store.get(session_id, display=True)
    assert session is not None
    turn = len(session.messages) // 2
    print("ready", flush=True)
    while True:
        user = Message.user(f"turn {turn} question " + "q" * (turn % 97))
        reply = Message.assistant(f"turn {turn} answer " + "a" * (turn % 89))
        await store.append(session_id, display=[user, reply], context=[user, reply], context_token_count=turn)
        print(f"ok {turn}", flush=True)
        turn += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
