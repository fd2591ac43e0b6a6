"""Documents written for a person to keep: a conversation as Markdown (`markdown.py`; its PDF is
laid out by navi/files/pdf.py, as research reports are). The JSON archive, for Navi to read back,
is navi/sessions/archive.py."""
