"""Webhook payload models against GitHub's real example payloads and its webhook schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from bot.events import (
    CheckRunEvent,
    InstallationEvent,
    IssueCommentEvent,
    PullRequestEvent,
    WorkflowJobEvent,
)

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
WEBHOOKS = CORPUS / "webhooks"
SCHEMA = CORPUS / "openapi" / "webhooks-schema.api.github.com.json"

# The events the bot reads with a model, by X-GitHub-Event.
EVENT_MODELS: dict[str, type[BaseModel]] = {
    "check_run": CheckRunEvent,
    "issue_comment": IssueCommentEvent,
    "pull_request": PullRequestEvent,
    "installation": InstallationEvent,
    "workflow_job": WorkflowJobEvent,
}


def _our_payload_files() -> list[Path]:
    if not WEBHOOKS.is_dir():
        return []
    return sorted(p for p in WEBHOOKS.glob("*.json") if p.name.split(".")[0] in EVENT_MODELS)


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _corpus(name: str) -> dict[str, Any]:
    path = WEBHOOKS / name
    if not path.is_file():
        pytest.fail(
            f"corpus file {path} is absent (tests/fixtures/corpus is part of the repository)"
        )
    return _load(path)


def test_corpus_holds_every_event_we_consume() -> None:
    seen = {p.name.split(".")[0] for p in _our_payload_files()}
    assert seen == set(EVENT_MODELS)


@pytest.mark.parametrize("path", _our_payload_files(), ids=lambda p: p.name)
def test_every_real_payload_of_our_events_parses(path: Path) -> None:
    event, action, _n, _ext = path.name.split(".")
    payload = _load(path)

    parsed = EVENT_MODELS[event].model_validate(payload)
    if action != "none":
        assert getattr(parsed, "action", None) == action


def test_a_workflow_job_names_its_check_run_and_its_runner() -> None:
    # A real job (wolfy1339/github-events-schemas): its check run's id is its own.
    real = WorkflowJobEvent.model_validate(_corpus("workflow_job.in_progress.3.json"))
    job = real.workflow_job
    assert job.check_run_id == job.id == 14541957942
    assert (job.runner_name, job.labels, job.run_attempt) == (
        "GitHub Actions 6",
        ["ubuntu-latest"],
        1,
    )
    # GitHub's documented example names another check run than its id: the URL is followed.
    example = WorkflowJobEvent.model_validate(_corpus("workflow_job.completed.1.json"))
    assert (example.workflow_job.id, example.workflow_job.check_run_id) == (289782451, 1291536064)
    # The oldest example has no run_attempt: its run had one.
    old = WorkflowJobEvent.model_validate(_corpus("workflow_job.in_progress.1.json"))
    assert old.workflow_job.run_attempt == 1


def test_actions_check_run_exposes_job_id_and_nullable_fields() -> None:
    payload = _corpus("check_run.completed.1.json")

    parsed = CheckRunEvent.model_validate(payload)

    run = parsed.check_run
    assert run.app is not None and run.app.slug == "github-actions"
    assert run.actions_job_id == run.id == payload["check_run"]["id"]
    assert run.conclusion == "failure"
    assert run.output.title is None
    assert [pr.number for pr in run.pull_requests] == [2]
    # details_url here is not an Actions run URL: no run id can be read from it.
    assert run.run_id is None
    assert parsed.installation is None


def test_non_actions_check_run_has_no_job_id() -> None:
    parsed = CheckRunEvent.model_validate(_corpus("check_run.requested_action.1.json"))

    assert parsed.check_run.app is not None
    assert parsed.check_run.app.slug == "electron-cation"
    assert parsed.check_run.actions_job_id is None
    assert parsed.installation is not None and parsed.installation.id == 690857


def test_check_run_without_details_url_or_app_slug() -> None:
    parsed = CheckRunEvent.model_validate(_corpus("check_run.rerequested.1.json"))

    assert parsed.check_run.details_url is None
    assert parsed.check_run.run_id is None
    assert parsed.check_run.actions_job_id is None
    assert parsed.check_run.pull_requests == []


def test_run_id_is_read_from_an_actions_details_url() -> None:
    payload = _corpus("check_run.completed.1.json")
    run = dict(payload["check_run"])
    run["details_url"] = "https://github.com/o/r/actions/runs/32727954465/job/97433407085"

    parsed = CheckRunEvent.model_validate({**payload, "check_run": run})

    assert parsed.check_run.run_id == 32727954465
    assert parsed.check_run.actions_job_id == run["id"]


def test_deleted_fork_gives_null_head_repo() -> None:
    payload = _corpus("pull_request.synchronize.1.json")
    pr = dict(payload["pull_request"])
    pr["head"] = {**pr["head"], "repo": None}

    parsed = PullRequestEvent.model_validate({**payload, "pull_request": pr})

    assert parsed.pull_request.head.repo is None
    assert parsed.number == parsed.pull_request.number


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("check_run", {"check_run": 5}),
        ("issue_comment", {"action": "created", "comment": "hello"}),
        ("pull_request", {"action": "opened", "number": "x"}),
        ("installation", {"action": "created", "installation": {"id": "not-an-int"}}),
    ],
)
def test_wrong_shape_raises_validation_error(event: str, payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EVENT_MODELS[event].model_validate(payload)


def test_real_issue_comment_is_not_on_a_pull_request() -> None:
    parsed = IssueCommentEvent.model_validate(_corpus("issue_comment.created.1.json"))

    assert parsed.is_pull_request is False
    assert parsed.comment.user is not None and not parsed.comment.user.is_bot


# --- a synthetic issue_comment on a pull request, built from GitHub's webhook schema ----------


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].split("/")[1:]:
            target = target[part]
        node = target
    return node


def _example(schema: dict[str, Any], node: dict[str, Any], depth: int = 0) -> Any:
    """A minimal instance of `node`: required properties only, first non-null alternative."""
    node = _resolve(schema, node)
    if "allOf" in node:
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            value = _example(schema, part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [_resolve(schema, o) for o in node[key]]
            non_null = [o for o in options if o.get("type") != "null"]
            return _example(schema, (non_null or options)[0], depth + 1)
    if "enum" in node:
        return next(v for v in node["enum"] if v is not None)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return {
            name: _example(schema, props[name], depth + 1)
            for name in node.get("required", [])
            if name in props
        }
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "x"


def test_synthetic_issue_comment_on_a_pull_request_sets_is_pull_request() -> None:
    if not SCHEMA.is_file():
        pytest.fail(f"{SCHEMA} is absent: the corpus is in tests/fixtures/corpus")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    hook = schema["webhooks"]["issue-comment-created"]["post"]
    body_schema = hook["requestBody"]["content"]["application/json"]["schema"]
    payload = _example(schema, body_schema)
    issue_schema = _resolve(schema, _resolve(schema, body_schema)["properties"]["issue"])
    assert "pull_request" not in payload["issue"], "schema marks issue.pull_request as optional"
    pr_link_schema = _find_property(schema, issue_schema, "pull_request")
    payload["issue"]["pull_request"] = {
        **_example(schema, pr_link_schema),
        "html_url": "https://github.com/o/r/pull/1",
    }

    parsed = IssueCommentEvent.model_validate(payload)

    assert parsed.is_pull_request is True
    assert parsed.issue.pull_request is not None
    assert parsed.issue.pull_request.html_url == "https://github.com/o/r/pull/1"


def _find_property(schema: dict[str, Any], node: dict[str, Any], name: str) -> dict[str, Any]:
    node = _resolve(schema, node)
    if name in node.get("properties", {}):
        return _resolve(schema, node["properties"][name])
    for key in ("allOf", "anyOf", "oneOf"):
        for part in node.get(key, []):
            try:
                return _find_property(schema, part, name)
            except KeyError:
                continue
    raise KeyError(name)


def test_bot_sender_is_recognised() -> None:
    payload = _corpus("issue_comment.created.1.json")
    comment = {**payload["comment"], "user": {"login": "flaky-triage[bot]", "type": "Bot"}}

    parsed = IssueCommentEvent.model_validate({**payload, "comment": comment})

    assert parsed.comment.user is not None and parsed.comment.user.is_bot


def test_installation_events_read_account_and_repositories() -> None:
    created = InstallationEvent.model_validate(_corpus("installation.created.1.json"))
    suspended = InstallationEvent.model_validate(_corpus("installation.suspend.1.json"))

    assert created.installation.account is not None
    assert created.installation.account.login == "Codertocat"
    assert created.repositories and all(r.full_name for r in created.repositories)
    assert suspended.repositories is None
