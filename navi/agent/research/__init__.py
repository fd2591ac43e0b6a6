"""Deep research (issue 47): a question planned into sub-questions, searched, read with notes
kept per source, condensed as they grow, and written up as a report whose every citation names a
source read. `loop.py` is the loop, `sources.py` what it reads, `notes.py` the notes, `report.py`
the report and its file. Started as a background job in `research` mode (docs/jobs.md)."""

from navi.agent.research.loop import ResearchConfig, Researcher

__all__ = ["ResearchConfig", "Researcher"]
