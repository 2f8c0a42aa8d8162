"""Prometheus metrics, one registry per process (so tests can build several apps)."""

from __future__ import annotations

from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Every value of `flakybot_connections_closed`'s `reason` label (bot/connections.py).
CONNECTION_CLOSE_REASONS = (
    "header-timeout",
    "body-timeout",
    "too-slow",
    "evicted",
    "evicted-sending",
    "refused",
)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter(
            "flakybot_deliveries",
            "Webhook deliveries by event and outcome",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.inbox_depth = Gauge(
            "flakybot_inbox_depth", "Deliveries waiting or in progress", registry=self.registry
        )
        self.inbox_oldest_age = Gauge(
            "flakybot_inbox_oldest_age_seconds",
            "Age of the oldest delivery still waiting",
            registry=self.registry,
        )
        self.handler_seconds = Histogram(
            "flakybot_handler_seconds",
            "Time spent handling one delivery",
            ["event"],
            registry=self.registry,
        )
        self.github_requests = Counter(
            "flakybot_github_requests",
            "Requests made to GitHub by endpoint group, method and status",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.rate_limit_remaining = Gauge(
            "flakybot_github_rate_limit_remaining",
            "Requests left in the current rate-limit window",
            ["installation"],
            registry=self.registry,
        )
        self.verdicts = Counter(
            "flakybot_verdicts", "Verdicts given, by kind", ["verdict"], registry=self.registry
        )
        self.reruns = Counter(
            "flakybot_reruns", "Rerun requests by HTTP status", ["status"], registry=self.registry
        )
        self.commands = Counter(
            "flakybot_commands",
            "`/flaky` commands by name and outcome (done, not-done; refused: not permitted or "
            "over the hourly limit, name any)",
            ["command", "outcome"],
            registry=self.registry,
        )
        self.feedback = Counter(
            "flakybot_feedback",
            "`/flaky wrong` reports, about one test or the whole PR",
            ["scope"],
            registry=self.registry,
        )
        self.connections_open = Gauge(
            "flakybot_connections_open",
            "HTTP connections open on the listening socket: busy with a request, receiving "
            "its body, or waiting for one (idle or head half-sent)",
            ["state"],
            registry=self.registry,
        )
        self.connections_closed = Counter(
            "flakybot_connections_closed",
            "HTTP connections the bot closed or refused to protect itself: request head or "
            "body too slow, evicted or refused at MAX_CONNECTIONS or "
            "MAX_CONNECTIONS_PER_CLIENT",
            ["reason"],
            registry=self.registry,
        )
        for reason in CONNECTION_CLOSE_REASONS:
            self.connections_closed.labels(reason)
        self.tracking_issues = Counter(
            "flakybot_tracking_issues",
            "Tracking issues created, reopened and closed by the bot",
            ["action"],
            registry=self.registry,
        )


# A repository endpoint's group, by the path segment after /repos/{owner}/{repo}/.
_REPO_GROUPS = {
    "pulls": "pulls",
    "check-runs": "check-runs",
    "contents": "contents",
    "collaborators": "collaborators",
    "installation": "app",
    "labels": "labels",
}
# Every value of the `endpoint` label (docs/operations.md lists them).
ENDPOINT_GROUPS = frozenset(
    {"app", "pulls", "check-runs", "logs", "artifacts", "reruns", "actions", "issues"}
    | {"comments", "reactions", "labels", "contents", "collaborators", "other"}
)


def endpoint_group(path: str) -> str:
    """The group a REST API path belongs to, for metrics: few values, whatever the ids.

    `path` is relative to the API root (`/repos/o/r/pulls/7/files?page=2`), or a full URL
    on api.github.com.
    """
    parts = [part for part in urlsplit(path).path.split("/") if part]
    if parts[:1] == ["app"]:
        return "app"
    if parts[:1] != ["repos"] or len(parts) < 4:
        return "other"
    rest = parts[3:]
    if rest[0] == "actions":
        if rest[-1] == "logs":
            return "logs"
        if "artifacts" in rest:
            return "artifacts"
        return "reruns" if rest[-1] in {"rerun", "rerun-failed-jobs"} else "actions"
    if rest[0] == "issues":
        if rest[-1] == "reactions":
            return "reactions"
        return "comments" if "comments" in rest else "issues"
    if rest[0] == "commits" and len(rest) >= 3:
        return _REPO_GROUPS.get(rest[2], "other")
    return _REPO_GROUPS.get(rest[0], "other")
