"""What the simulator saw and did, in order: for assertions and for people reading a demo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Write:
    """A non-GET request that changed the simulated repository."""

    method: str
    path: str
    body: Any
    status: int
    at: float  # time.monotonic()


@dataclass(frozen=True)
class TimelineEntry:
    kind: Literal["webhook", "api"]
    at: float  # time.monotonic()
    status: int  # 0: the webhook target could not be reached
    method: str = ""
    path: str = ""
    not_modified: bool = False
    event: str = ""
    action: str = ""
    delivery_id: str = ""

    def describe(self) -> str:
        if self.kind == "webhook":
            answered = str(self.status) if self.status else "no answer"
            name = f"{self.event}.{self.action}" if self.action else self.event
            return f"webhook {name} delivery {self.delivery_id} -> {answered}"
        suffix = " (not modified)" if self.not_modified else ""
        return f"{self.method} {self.path} -> {self.status}{suffix}"
