"""What every handler is given besides the event and the installation's client."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.github.client import GitHubApp
from bot.handlers.sources import SourceCache
from bot.metrics import Metrics
from bot.store import Store


@dataclass(frozen=True)
class BotContext:
    store: Store
    github: GitHubApp
    metrics: Metrics
    log_cap_bytes: int = 64 * 1024 * 1024
    tracking_refresh_seconds: float = 60.0
    sources: SourceCache = field(default_factory=SourceCache)
    dashboard_url: str = ""  # DASHBOARD_URL: the PR comment links each PR's page there
