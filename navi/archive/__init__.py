"""Documents written for a person to keep: a conversation as Markdown (`markdown.py`), and any
Markdown text as a PDF (`pdf.py`, shared by the conversation export and whatever else writes a
report). The JSON archive, for Navi to read back, is navi/sessions/archive.py."""
