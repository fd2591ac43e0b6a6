"""The fake model server for the streaming benchmark, in its own process.

Streamed text chunks carry the server's clock at the moment they were sent (`<unix time>|`), so a
client can measure the delay each chunk picked up on its way. The user's message says what to do:
`stream N R` → N chunks at R per second; anything else → a two-chunk reply at once.

    .venv/bin/python bench/fake_model.py --port 11500
"""

from __future__ import annotations

import argparse

from navi.testing.fake_server import FakeModel, FakeModelServer
from navi.testing.script import Reply, Script, ScriptRequest

MODEL = FakeModel("bench-model", context_length=1_000_000, capabilities=("completion", "tools"))


def responder(request: ScriptRequest) -> Reply:
    words = request.last_user_text.split()
    if len(words) == 3 and words[0] == "stream":
        count, rate = int(words[1]), float(words[2])
        delay = 1.0 / rate if rate > 0 else 0.0
        return Reply(
            text="x" * count,
            chunk_chars=1,
            delay=delay,
            stamp=True,
            prompt_tokens=100,
            completion_tokens=count,
        )
    return Reply(text="ok", chunk_chars=1, stamp=True, prompt_tokens=100, completion_tokens=2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    FakeModelServer(
        Script(responder=responder, record=False), models=(MODEL,), port=args.port
    ).serve_forever()


if __name__ == "__main__":
    main()
