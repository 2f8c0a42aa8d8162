"""Webhook deliveries as GitHub sends them: payloads, signatures and headers."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from bot.sim.app_checks import AppCheckRun
from bot.sim.shapes import Json, Shapes, node_id
from bot.sim.state import CheckRun, Comment

HOOK_ID = 400_000_001


def signature_256(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery_headers(
    event: str, delivery_id: str, body: bytes, *, secret: str, sign: bool, app_id: int
) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/6a7b8c9",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Hook-ID": str(HOOK_ID),
        "X-GitHub-Hook-Installation-Target-ID": str(app_id),
        "X-GitHub-Hook-Installation-Target-Type": "integration",
    }
    if sign:
        headers["X-Hub-Signature"] = (
            "sha1=" + hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()
        )
        headers["X-Hub-Signature-256"] = signature_256(secret, body)
    return headers


def _envelope(shapes: Shapes, action: str, sender: str) -> dict[str, Any]:
    installation_id = shapes.world.app.installation_id
    return {
        "action": action,
        "repository": shapes.repository(),
        "installation": {
            "id": installation_id,
            "node_id": node_id("Installation", installation_id),
        },
        "sender": shapes.user(sender),
    }


def check_run_completed(shapes: Shapes, run: CheckRun) -> Json:
    pr = run.check.pr
    sender = shapes.world.pulls[pr].spec.author if pr is not None else shapes.world.repo.owner
    envelope = _envelope(shapes, "completed", sender)
    if run.check.is_actions:
        envelope["sender"] = shapes.user("github-actions[bot]")
    check_run = shapes.check_run(run)
    check_run["check_suite"] = shapes.check_suite_brief(run)
    payload = {"action": "completed", "check_run": check_run, **envelope}
    return payload


def workflow_job_completed(shapes: Shapes, run: CheckRun) -> Json:
    """`workflow_job` `completed`: the job as the jobs API shows it, in the envelope of a
    delivery GitHub sends to an App subscribed to the event."""
    envelope = _envelope(shapes, "completed", "github-actions[bot]")
    return {"action": "completed", "workflow_job": shapes.job(run), **envelope}


def app_check_run_completed(shapes: Shapes, run: AppCheckRun) -> Json:
    """`check_run` `completed` for a run the App created, as GitHub sends it to that App."""
    envelope = _envelope(shapes, "completed", shapes.world.bot_login)
    check_run = shapes.app_check_run(run)
    heads = [pr for pr in shapes.world.pulls.values() if pr.spec.head_sha == run.head_sha]
    check_run["check_suite"] = {
        "id": run.suite_id,
        "node_id": node_id("CheckSuite", run.suite_id),
        "head_branch": heads[0].spec.head_ref if heads else None,
        "head_sha": run.head_sha,
        "status": run.status,
        "conclusion": run.conclusion,
        "url": f"{shapes.repo_api}/check-suites/{run.suite_id}",
        "before": heads[0].spec.base_sha if heads else None,
        "after": run.head_sha,
        "pull_requests": check_run["pull_requests"],
        "app": check_run["app"],
        "created_at": check_run["started_at"],
        "updated_at": check_run["completed_at"] or check_run["started_at"],
    }
    return {"action": "completed", "check_run": check_run, **envelope}


def pull_request_synchronize(shapes: Shapes, number: int, before: str) -> Json:
    """The pull_request event of a push to the PR's branch (the pull already moved)."""
    pull = shapes.world.pulls[number]
    return {
        "number": number,
        "before": before,
        "after": pull.spec.head_sha,
        "pull_request": shapes.pull_request(pull),
        **_envelope(shapes, "synchronize", pull.spec.author),
    }


def pull_request_opened(shapes: Shapes, number: int) -> Json:
    """The pull_request event GitHub sends when the PR is opened, before any check ends."""
    pull = shapes.world.pulls[number]
    return {
        "number": number,
        "pull_request": shapes.pull_request(pull),
        **_envelope(shapes, "opened", pull.spec.author),
    }


def issue_comment_created(shapes: Shapes, comment: Comment) -> Json:
    payload = {
        "issue": shapes.issue(shapes.world.issues[comment.issue]),
        "comment": shapes.comment(comment),
        **_envelope(shapes, "created", comment.user),
    }
    return payload
