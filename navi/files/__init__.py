"""Files Navi makes for people to keep: `pdf.py` turns Markdown into a PDF (a research report;
a conversation's export). Imports nothing of Navi's, so any part may use it."""
