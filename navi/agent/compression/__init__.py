"""Compression: keeping a long conversation inside the model's window.

- `compressor.py` — the `ContextCompressor`: when a context must be compressed (the threshold, a
  prompt that no longer fits), one pass of it, and what it remembers per session (futile passes,
  a model that cannot summarise) in the shared session state;
- `transcript.py` — what is folded: the conversation cut into turns, the recent ones kept verbatim;
- `summary.py` — the summary the model writes (in chunks past the summariser's input cap, checked
  before it is trusted), `continued.py` — the same asked at the end of the prompt a model server
  has cached, `condense.py` — Navi's own lossless-in-what-it-keeps digest when the model cannot;
- `in_turn.py` — compression before a model call inside a turn; after a turn the
  `CompressionWorker` (navi/agent/workers.py) asks the compressor;
- `shorten.py` — old long messages sent as head and tail with a recall key.

Nothing is imported here: each module is imported by name.
"""
