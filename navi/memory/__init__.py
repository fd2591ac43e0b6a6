"""Long-term memory: facts about the user, a narrative summary, and which sessions were read."""

from navi.memory.base import Fact, MemoryStore, UpsertOutcome

__all__ = ["Fact", "MemoryStore", "UpsertOutcome"]
