"""Check runs the App itself creates (`POST /check-runs`, `PATCH /check-runs/{id}`), with
GitHub's validation and limits: 50 annotations a request, 65,535 characters of summary or
text, an annotation's title of 255 and message or raw details of 65,535, its lines from 1 to
2^31 - 1 (a database integer), a conclusion whenever the status is `completed`; each
update's annotations are appended to those already there, as on GitHub."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Json = dict[str, Any]

MAX_ANNOTATIONS_PER_REQUEST = 50
MAX_OUTPUT_CHARS = 65_535  # output.summary and output.text
STATUSES = frozenset({"queued", "in_progress", "completed"})
CONCLUSIONS = frozenset(
    {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
)
LEVELS = frozenset({"notice", "warning", "failure"})
_ANNOTATION_KEYS = ("path", "start_line", "end_line", "annotation_level", "message")
_ANNOTATION_LIMITS = {"title": 255, "message": 65_535, "raw_details": 65_535}
MAX_LINE = 2**31 - 1


@dataclass
class AppCheckRun:
    id: int
    suite_id: int
    name: str
    head_sha: str
    started_at: datetime
    status: str = "queued"
    conclusion: str | None = None
    completed_at: datetime | None = None
    details_url: str | None = None
    external_id: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[Json] = field(default_factory=list)
    requests: int = 0  # creates and updates it took

    def apply(self, body: Json, moment: datetime) -> None:
        """Carry out a validated create or update."""
        self.requests += 1
        for key in ("name", "details_url", "external_id"):
            if key in body:
                setattr(self, key, body[key])
        if "conclusion" in body:
            self.conclusion, self.status = body["conclusion"], "completed"
            self.completed_at = moment
        elif "status" in body:
            self.status = body["status"]
        output = body.get("output")
        if isinstance(output, dict):
            self.title, self.summary = output["title"], output["summary"]
            self.text = output.get("text", self.text)
            self.annotations.extend(dict(note) for note in output.get("annotations") or [])


def problem(body: object, *, creating: bool) -> str | None:
    """GitHub's 422 message for a create or update it refuses; None when it takes it."""
    if not isinstance(body, dict):
        return "Invalid request.\n\nInvalid input: object is missing required key: name."
    missing = [
        key for key in ("name", "head_sha") if creating and not isinstance(body.get(key), str)
    ]
    if missing:
        return f"Invalid request.\n\n{_quoted(missing)} {_verb(missing)} supplied."
    for key, allowed in (("status", STATUSES), ("conclusion", CONCLUSIONS)):
        if key in body and body[key] not in allowed:
            return f"Invalid request.\n\nFor 'properties/{key}', \"{body[key]}\" is not valid."
    if body.get("status") == "completed" and "conclusion" not in body:
        return "Invalid request.\n\nconclusion is required when status is completed."
    output = body.get("output")
    return None if output is None else _output_problem(output)


def _output_problem(output: object) -> str | None:
    if not isinstance(output, dict):
        return "Invalid request.\n\nFor 'properties/output', it is not an object."
    missing = [key for key in ("title", "summary") if not isinstance(output.get(key), str)]
    if missing:
        return f"Invalid request.\n\n{_quoted(missing)} {_verb(missing)} supplied."
    for key in ("summary", "text"):
        size = len(output.get(key) or "")
        if size > MAX_OUTPUT_CHARS:
            return (
                f"Invalid request.\n\nOnly {MAX_OUTPUT_CHARS} characters are allowed in "
                f"output.{key}; {size} were supplied."
            )
    notes = output.get("annotations") or []
    if not isinstance(notes, list):
        return "Invalid request.\n\nFor 'properties/annotations', it is not an array."
    if len(notes) > MAX_ANNOTATIONS_PER_REQUEST:
        return (
            f"Invalid request.\n\nOnly {MAX_ANNOTATIONS_PER_REQUEST} annotations are allowed "
            f"per request; {len(notes)} were supplied."
        )
    return next((p for p in map(_annotation_problem, notes) if p is not None), None)


def _annotation_problem(note: object) -> str | None:
    if not isinstance(note, dict):
        return "Invalid request.\n\nFor 'items', it is not an object."
    missing = [key for key in _ANNOTATION_KEYS if key not in note]
    if missing:
        return f"Invalid request.\n\n{_quoted(missing)} {_verb(missing)} supplied."
    if note["annotation_level"] not in LEVELS:
        level = note["annotation_level"]
        return f"Invalid request.\n\nFor 'properties/annotation_level', \"{level}\" is not valid."
    for key in ("start_line", "end_line"):
        if not isinstance(note[key], int):
            return f"Invalid request.\n\nFor 'properties/{key}', it is not an integer."
        if not 1 <= note[key] <= MAX_LINE:
            return f"Invalid request.\n\nFor 'properties/{key}', {note[key]} is out of range."
    for key, limit in _ANNOTATION_LIMITS.items():
        if len(str(note.get(key) or "")) > limit:
            return f"Invalid request.\n\nOnly {limit} characters are allowed in {key}."
    return None


def _quoted(keys: list[str]) -> str:
    return ", ".join(f'"{key}"' for key in keys)


def _verb(keys: list[str]) -> str:
    return "wasn't" if len(keys) == 1 else "weren't"
