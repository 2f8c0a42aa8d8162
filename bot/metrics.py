"""Prometheus metrics, one registry per process (so tests can build several apps)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


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
            "Requests made to GitHub by method and status",
            ["method", "status"],
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
