"""Agent Skills: folders of instructions (`SKILL.md`), scripts and references the model reads on demand.

`format.py` (the published format, checked with file and line), `library.py` (each user's skills,
which are on, the system message's listing), `install.py` (from a folder, a zip or a git URL). The
tools that use them are in `navi/tools/builtin/skills.py`; see docs/skills.md.
"""

from navi.skills.format import Skill, SkillError, SkillProblem
from navi.skills.library import LoadReport, SkillLibrary, SkillNotFound

__all__ = ["LoadReport", "Skill", "SkillError", "SkillLibrary", "SkillNotFound", "SkillProblem"]
