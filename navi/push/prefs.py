"""A user's notification choices: which kinds notify (answers, approvals, reminders, jobs, and the
model's own `notify` calls), and quiet hours, read in the user's zone (no push then; an approval
waits in the conversation as it always does)."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from datetime import datetime, time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from navi.push.models import Kind


class QuietHours(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: str = Field(..., description="HH:MM, the user's zone")
    end: str = Field(..., description="HH:MM; before start means the quiet runs past midnight")

    @field_validator("start", "end")
    @classmethod
    def _clock_time(cls, value: str) -> str:
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value)
        if match is None or int(match[1]) > 23 or int(match[2]) > 59:
            raise ValueError(f"{value!r} is not a time of day as HH:MM")
        return time(int(match[1]), int(match[2])).strftime("%H:%M")

    def holds(self, moment: datetime) -> bool:
        now = moment.strftime("%H:%M")
        if self.start == self.end:
            return False
        if self.start < self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end


class NotifySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answers: bool = Field(default=True, description="A turn answered while no page of yours was in view")
    approvals: bool = Field(default=True, description="A tool call waits for your approval")
    reminders: bool = Field(default=True, description="A schedule or reminder ran")
    jobs: bool = Field(default=True, description="A background job ended")
    notes: bool = Field(default=True, description="The model sent you a notification (the notify tool)")
    quiet: QuietHours | None = None

    def allows(self, kind: Kind) -> bool:
        return bool(getattr(self, _FIELD[kind]))


_FIELD: dict[str, str] = {
    "answer": "answers",
    "approval": "approvals",
    "reminder": "reminders",
    "job": "jobs",
    "notify": "notes",
}


class NotifySettingsStore(ABC):
    @abstractmethod
    async def get(self, owner: str) -> NotifySettings: ...

    @abstractmethod
    async def put(self, owner: str, settings: NotifySettings) -> None: ...


class InMemoryNotifySettings(NotifySettingsStore):
    def __init__(self) -> None:
        self._kept: dict[str, str] = {}

    async def get(self, owner: str) -> NotifySettings:
        return parse(self._kept.get(owner))

    async def put(self, owner: str, settings: NotifySettings) -> None:
        self._kept[owner] = settings.model_dump_json()


def parse(raw: str | None) -> NotifySettings:
    if not raw:
        return NotifySettings()
    try:
        data: Any = json.loads(raw)
        return NotifySettings.model_validate(data)
    except ValueError:
        return NotifySettings()
