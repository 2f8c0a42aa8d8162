"""App settings (Probot's variable names) and the per-repository `.github/flaky.yml` model."""

from __future__ import annotations

import base64
import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

import yaml
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    IPvAnyNetwork,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.triage.imports.walk import DEFAULT_BYTES, DEFAULT_FILE_BYTES, DEFAULT_FILES
from bot.triage.parsers.custom import MAX_PATTERN, CustomPattern
from bot.triage.user_regex import UserRegexError, compile_user

DEFAULT_DATABASE_URL = "sqlite:///flakybot.sqlite3"
REPO_CONFIG_PATH = ".github/flaky.yml"
DEFAULT_DELIVERY_RETENTION_DAYS = 14.0
# The dashboard token is all that keeps private repositories' test names private: too long
# and too varied to guess. Both commands of the hint make one of 256 bits.
DASHBOARD_TOKEN_MIN_CHARS = 32
DASHBOARD_TOKEN_MIN_DISTINCT = 10
DASHBOARD_TOKEN_HINT = (
    'make one with `python -c "import secrets; print(secrets.token_urlsafe(32))"` '
    "or `openssl rand -hex 32`"
)
# GitHub sends a delivery's head and body at once and gives up on it after 10 s.
DEFAULT_HEADER_TIMEOUT_SECONDS = 10.0
DEFAULT_BODY_TIMEOUT_SECONDS = 10.0
# GitHub's body arrives with its head; a stranger's trickling one is cut after the grace.
DEFAULT_BODY_GRACE_SECONDS = 2.0
DEFAULT_MIN_BODY_RATE = 4096.0
# Well below a small open-file limit (256 on macOS), which GitHub calls, the database and
# the logs share with the listening socket.
DEFAULT_MAX_CONNECTIONS = 100
# One client (an address, an IPv6 /64) holds no more than this; trusted proxies are not held.
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 20


# What the caches kept across deliveries may hold, and each one's share of it.
DEFAULT_CACHE_MEMORY_MB = 256
_MIB = 1024 * 1024


@dataclass(frozen=True)
class CacheMemory:
    """CACHE_MEMORY_MB split between the caches kept across deliveries, in bytes (by the
    estimates of bot/handlers/cache_memory.py and bot/github/client.py)."""

    total_mb: int = DEFAULT_CACHE_MEMORY_MB

    @property
    def trees(self) -> int:  # commits' file lists: a 100,000-file one is some 35 MB
        return self.total_mb * _MIB // 2

    @property
    def blobs(self) -> int:  # file texts the walks read
        return self.total_mb * _MIB // 4

    @property
    def walks(self) -> int:  # finished walks, by commit and test file
        return self.total_mb * _MIB // 10

    @property
    def responses(self) -> int:  # GitHub's answers kept for conditional requests (ETags)
        return self.total_mb * _MIB - self.trees - self.blobs - self.walks


# LOG_LEVEL: Probot's names (pino's) and Python's, as Python's. Python has no `trace`: it
# is its most detailed level, DEBUG.
PROBOT_LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
LOG_LEVELS = {
    "trace": "DEBUG",
    "debug": "DEBUG",
    "info": "INFO",
    "warn": "WARNING",
    "warning": "WARNING",
    "error": "ERROR",
    "fatal": "CRITICAL",
    "critical": "CRITICAL",
}


class ConfigError(ValueError):
    """A setting `flakybot serve` cannot start with; the message names its variable."""


class Settings(BaseSettings):
    """Read from the environment (and a `.env` file) at start, never at import time."""

    # hide_input_in_errors: a refused value may be a secret, and errors can reach a log.
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", case_sensitive=False, hide_input_in_errors=True
    )

    app_id: int | None = None
    private_key: SecretStr | None = None
    private_key_path: Path | None = None
    webhook_secret: SecretStr | None = None
    webhook_path: str = "/api/github/webhooks"
    github_api_url: str = "https://api.github.com"
    # GitHub Enterprise Server, as Probot reads it: GHE_HOST=github.example.com makes the API
    # GHE_PROTOCOL://GHE_HOST/api/v3 (GraphQL: /api/graphql) unless GITHUB_API_URL is set.
    ghe_host: str | None = None
    ghe_protocol: Literal["https", "http"] = "https"
    # A webhook proxy's channel (https://smee.io/...): `serve` relays its deliveries to the
    # webhook path, for a trial on a machine GitHub cannot reach.
    webhook_proxy_url: str | None = None
    database_url: str = DEFAULT_DATABASE_URL
    host: str = "0.0.0.0"
    port: int = 3000
    # Probot's levels (trace, debug, info, warn, error, fatal) or Python's names.
    log_level: str = "INFO"
    # Worker tuning; the defaults suit one small instance.
    worker_concurrency: int = Field(default=4, ge=1, le=64)
    max_attempts: int = Field(default=6, ge=1, le=50)
    claim_lease_seconds: float = Field(default=300.0, gt=0)
    log_cap_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    # The import walk's budgets (bot/triage/imports): files and bytes read per test, the
    # most a repository's `imports:` may ask for, and the largest file read. The walk has
    # no depth limit; IMPORT_FILES=0 turns it off.
    import_files: int = Field(default=DEFAULT_FILES, ge=0, le=100_000)
    import_bytes: int = Field(default=DEFAULT_BYTES, ge=1, le=1_000_000_000)
    import_file_bytes: int = Field(default=DEFAULT_FILE_BYTES, ge=1, le=10_000_000)
    # Before budgets: hops followed. Still read so an old .env starts: 0 turns the walk off
    # (as IMPORT_FILES=0), any other value is ignored.
    import_depth: int | None = Field(default=None, ge=0)
    # Memory, in MiB, for the caches kept across deliveries: trees, file texts, walks and
    # GitHub's responses (CacheMemory); the k8s manifest's memory limit counts it.
    cache_memory_mb: int = Field(default=DEFAULT_CACHE_MEMORY_MB, ge=64, le=65536)
    # Finished (done or dead) deliveries are deleted this long after they finished.
    delivery_retention_days: float = Field(default=DEFAULT_DELIVERY_RETENTION_DAYS, gt=0)
    # Seconds between content-creating requests (comments, issues) of one installation, as
    # GitHub asks; tests and benchmarks against the simulator lower it.
    write_interval: float = Field(default=1.0, ge=0, le=60)
    # A tracking issue's new tally is written at most this long after the failure, in one
    # edit for every failure of the test in between (0: right away, one edit each).
    tracking_refresh_seconds: float = Field(default=60.0, ge=0, le=3600)
    # A request's head must be complete this long after its first byte, its body this long
    # after the head and, past the grace, arrive at this many bytes a second (0: any rate);
    # at most this many connections are open, this many from one client
    # (bot/connections.py).
    header_timeout_seconds: float = Field(default=DEFAULT_HEADER_TIMEOUT_SECONDS, gt=0, le=300)
    body_timeout_seconds: float = Field(default=DEFAULT_BODY_TIMEOUT_SECONDS, gt=0, le=300)
    body_grace_seconds: float = Field(default=DEFAULT_BODY_GRACE_SECONDS, ge=0, le=300)
    min_body_rate: float = Field(default=DEFAULT_MIN_BODY_RATE, ge=0, le=1e9)
    max_connections: int = Field(default=DEFAULT_MAX_CONNECTIONS, ge=1, le=100_000)
    max_connections_per_client: int = Field(
        default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT, ge=1, le=100_000
    )
    # The dashboard is off unless this is set; then every page asks for it.
    dashboard_token: SecretStr | None = None
    # Where people reach the dashboard (`https://flakybot.example.com`): the PR comment links
    # each PR's page there. Unset: no link (the comment still counts what it leaves out).
    dashboard_url: str | None = None
    # Reverse proxies (addresses or networks) whose X-Forwarded-For names the client, for
    # the dashboard's per-address sign-in throttle. Unset: the connecting address is the
    # client, and X-Forwarded-For, which anyone can send, is ignored.
    trusted_proxies: Annotated[list[IPvAnyNetwork] | None, NoDecode] = None
    # `serve`'s log lines: one JSON object each, or text for a person at a terminal (Probot's
    # `pretty`).
    log_format: Literal["json", "text"] = "json"
    # The log pre-filter's search (bot/triage/literals.py): Hyperscan when it is installed,
    # else RE2; both keep the same lines.
    log_scanner: Literal["auto", "hyperscan", "re2"] = "auto"

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        level = str(value).strip().lower() or "info"  # set but empty: the default
        if level not in LOG_LEVELS:
            raise ValueError(f"not a log level: use one of {', '.join(PROBOT_LEVELS)}")
        return LOG_LEVELS[level]

    @field_validator("log_format", mode="before")
    @classmethod
    def _pretty_is_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"pretty": "text", "": "json"}.get(value.strip().lower(), value.strip().lower())
        return value

    @field_validator("ghe_host", "webhook_proxy_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("webhook_proxy_url")
    @classmethod
    def _proxy_address(cls, url: str | None) -> str | None:
        if url and (urlsplit(url).scheme not in ("https", "http") or not urlsplit(url).netloc):
            raise ValueError("not a web address: give the channel as https://smee.io/ID")
        return url

    @field_validator("dashboard_token")
    @classmethod
    def _hard_to_guess(cls, token: SecretStr | None) -> SecretStr | None:
        if token is None or not token.get_secret_value():
            return None  # unset or empty: the dashboard is off
        value = token.get_secret_value()
        if len(value) < DASHBOARD_TOKEN_MIN_CHARS or len(set(value)) < DASHBOARD_TOKEN_MIN_DISTINCT:
            raise ValueError(
                f"too easy to guess: use at least {DASHBOARD_TOKEN_MIN_CHARS} random characters, "
                f"{DASHBOARD_TOKEN_MIN_DISTINCT} of them different; {DASHBOARD_TOKEN_HINT}"
            )
        return token

    @field_validator("dashboard_url")
    @classmethod
    def _web_address(cls, url: str | None) -> str | None:
        url = (url or "").strip().rstrip("/") or None
        if url and (urlsplit(url).scheme not in ("https", "http") or not urlsplit(url).netloc):
            raise ValueError("not a web address: give it as https://host[/path]")
        return url

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _webhook_path_is_absolute(self) -> Settings:
        if not self.webhook_path.startswith("/"):
            self.webhook_path = "/" + self.webhook_path
        return self

    @model_validator(mode="after")
    def _enterprise_server(self) -> Settings:
        enterprise = api_url_from_env(
            {"GHE_HOST": self.ghe_host, "GHE_PROTOCOL": self.ghe_protocol}
        )
        if enterprise and "github_api_url" not in self.model_fields_set:
            self.github_api_url = enterprise
        return self

    def missing_for_serve(self) -> list[str]:
        """Names of the variables `flakybot serve` cannot start without."""
        missing = []
        if self.app_id is None:
            missing.append("APP_ID")
        if self.private_key is None and self.private_key_path is None:
            missing.append("PRIVATE_KEY or PRIVATE_KEY_PATH")
        if self.webhook_secret is None or not self.webhook_secret.get_secret_value():
            missing.append("WEBHOOK_SECRET")
        return missing

    def private_key_pem(self) -> str:
        """The App's private key, PEM text that holds an RSA private key (GitHub Apps sign
        their JWTs with one): anything else would fail every delivery, not the start."""
        if self.private_key is not None:
            name, pem = "PRIVATE_KEY", _pem_text(self.private_key.get_secret_value())
        elif self.private_key_path is not None:
            name, pem = "PRIVATE_KEY_PATH", _read_key_file(self.private_key_path)
        else:
            raise ConfigError("no private key configured (PRIVATE_KEY or PRIVATE_KEY_PATH)")
        if not _is_rsa_private_key(pem):
            raise ConfigError(
                f"{name} does not hold an RSA private key in PEM form "
                "(the .pem file GitHub generates for the App)"
            )
        return pem

    def secret(self) -> str:
        if self.webhook_secret is None:
            raise ConfigError("no webhook secret configured (WEBHOOK_SECRET)")
        return self.webhook_secret.get_secret_value()

    def secret_values(self) -> list[str]:
        """Every secret the settings hold, for the log redactor: none may reach a log line."""
        values = [
            s.get_secret_value()
            for s in (self.webhook_secret, self.private_key, self.dashboard_token)
            if s is not None
        ]
        password = urlsplit(self.database_url).password
        # A webhook proxy's channel: whoever knows it can read the deliveries.
        proxy = [self.webhook_proxy_url] if self.webhook_proxy_url else []
        return values + proxy + ([unquote(password), password] if password else [])


def api_url_from_env(env: Mapping[str, str | None]) -> str | None:
    """The REST API root the environment names, as Settings reads it: GITHUB_API_URL, else
    GHE_HOST's (GitHub Enterprise Server, GHE_PROTOCOL or https), else None."""
    if env.get("GITHUB_API_URL"):
        return env["GITHUB_API_URL"]
    host = (env.get("GHE_HOST") or "").strip().removeprefix("https://").removeprefix("http://")
    if not host.strip("/"):
        return None
    return f"{env.get('GHE_PROTOCOL') or 'https'}://{host.strip('/')}/api/v3"


def settings_problems(exc: ValidationError) -> list[str]:
    """What is wrong with the environment, one line per variable, never showing a value:
    the value refused may be a secret."""
    return [
        f"{'.'.join(str(part) for part in err['loc']).upper()}: "
        f"{err['msg'].removeprefix('Value error, ')}"
        for err in exc.errors(include_input=False)
    ]


def _pem_text(value: str) -> str:
    """PRIVATE_KEY as Probot reads it: PEM text, with its newlines written `\\n` in one env
    line, or the PEM file base64-encoded (which keeps it on one line too)."""
    value = value.strip().replace("\\n", "\n")
    if "-----BEGIN" in value:
        return value
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return value
    return decoded if "-----BEGIN" in decoded else value


def _read_key_file(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise ConfigError(f"PRIVATE_KEY_PATH: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"PRIVATE_KEY_PATH: {path} is not a PEM text file") from None


def _is_rsa_private_key(pem: str) -> bool:
    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):  # TypeError: encrypted
        return False
    return isinstance(key, RSAPrivateKey)


class ReportSource(BaseModel):
    """Which artifacts of the job's workflow run hold test reports, and which files in them."""

    model_config = ConfigDict(extra="forbid")

    # A glob on the artifact's name; `{job}` stands for the failed check run's name, so a
    # matrix that names artifacts after its jobs reads only the failed job's reports.
    artifact: str = Field(min_length=1, max_length=200)
    files: list[str] = Field(default_factory=lambda: ["**/*.xml"], min_length=1, max_length=20)

    def matches(self, artifact_name: str, job_name: str) -> bool:
        return fnmatch.fnmatchcase(artifact_name, self.artifact.replace("{job}", job_name))


class AutoClose(BaseModel):
    """Close a tracking issue once its test has passed `passes` runs over `days` days."""

    model_config = ConfigDict(extra="forbid")

    passes: int = Field(ge=1, le=10_000)
    days: int = Field(ge=1, le=365)


class AutoQuarantine(BaseModel):
    """Quarantine a tracked test without a command once both hold: the lower bound of its
    failure rate's 95 % Wilson interval reaches `min_rate`, and its failures hit `min_prs`
    different pull requests."""

    model_config = ConfigDict(extra="forbid")

    min_rate: float = Field(gt=0.0, le=1.0)
    min_prs: int = Field(ge=1, le=1000)


class QuarantineSettings(BaseModel):
    """Quarantine on: `/flaky quarantine` works, and the bot's check run is the merge gate."""

    model_config = ConfigDict(extra="forbid")

    days: int = Field(default=14, ge=1, le=365)  # how long one lasts unless the command says
    label: str = Field(default="flaky:quarantined", min_length=1, max_length=50)
    auto: AutoQuarantine | None = None  # off by default


class ImportBudget(BaseModel):
    """The import walk's budgets for this repository's tests, per test: files and bytes read.
    The App's IMPORT_FILES / IMPORT_BYTES bound them (a larger value gets the App's); files 0
    turns the walk off for the repository."""

    model_config = ConfigDict(extra="forbid")

    files: int | None = Field(default=None, ge=0, le=100_000)
    bytes: int | None = Field(default=None, ge=1, le=1_000_000_000)


class CommentMode(StrEnum):
    ALWAYS = "always"  # also post when every check passes
    FAILURES = "failures"  # only when a check failed (the default)
    NEVER = "never"  # triage and record, never comment


class OwnersMode(StrEnum):
    """What a tracking issue does with the owners CODEOWNERS gives its test."""

    SHOW = "show"  # name them without `@`: nobody is notified (the default)
    MENTION = "mention"  # `@`-mention them: GitHub notifies them
    ASSIGN = "assign"  # name them without `@`, and assign the users on a new issue


class CheckRunConclusion(StrEnum):
    NEUTRAL = "neutral"  # the bot's check run never blocks a merge on its own
    STRICT = "strict"  # success only when every failure is flaky, unrelated and passed on rerun


def _runs_in_linear_time(pattern: str) -> str:
    try:
        compile_user(pattern, ignore_case=True)
    except UserRegexError as exc:
        raise ValueError(str(exc)) from None
    return pattern


# A `generic_messages` regex, run by RE2 (as is_generic runs it); one it cannot run is
# dropped alone, the others kept.
GenericMessage = Annotated[str, Field(max_length=MAX_PATTERN), AfterValidator(_runs_in_linear_time)]


class RepoConfig(BaseModel):
    """`.github/flaky.yml` on the default branch. Unknown keys are kept and reported, not fatal."""

    model_config = ConfigDict(extra="forbid")

    comment: CommentMode = CommentMode.FAILURES
    rerun: bool = True
    # A job whose failed tests the bot cannot classify (and none related) is rerun once per
    # commit and check: the cheapest evidence there is. False: such a job is not rerun.
    rerun_unknown: bool = True
    max_reruns: int = Field(default=1, ge=0, le=5)
    # Test reports inside the failed job's workflow-run artifacts (every format the report
    # registry reads). Unset: the artifacts the job's log says it uploaded are read when
    # their names or contents show reports (triage/reports/discovery.py); a list: those it
    # names, and nothing else; `[]`: no artifact is read.
    reports: list[ReportSource] | None = Field(default=None, max_length=10)
    # In-house harnesses: regexes whose named group `test` names a failed test.
    custom_patterns: list[CustomPattern] = Field(default_factory=list, max_length=20)
    # More distinct failed tests than this in one job: a mass failure, never "flaky".
    mass_failure_threshold: int = Field(default=10, ge=1, le=10_000)
    # Messages too generic to match two failures on their own (regexes, whole first line).
    generic_messages: list[GenericMessage] = Field(default_factory=list, max_length=50)

    # --- relatedness (footprint, risky changes, history) ---------------------------------
    # Extra footprints: a gitignore-style glob on the test file -> globs of what such tests
    # depend on, e.g. {"tests/e2e/**": ["**"]} (end-to-end tests depend on everything).
    footprints: dict[str, list[str]] = Field(default_factory=dict, max_length=50)
    # Changed paths that can break any test (added to the built-in list: workflows,
    # lockfiles, build manifests, Dockerfiles, conftest.py, jest/vitest setup files).
    risky_paths: list[str] = Field(default_factory=list, max_length=50)
    history_days: int = Field(default=30, ge=1, le=365)
    # How much the import walk may read per test (files, bytes); the App's settings bound it.
    imports: ImportBudget | None = None  # None: the App's
    # --- reruns and commands --------------------------------------------------------------
    max_reruns_per_pr_per_day: int = Field(default=10, ge=0, le=100)
    commands_per_hour: int = Field(default=10, ge=1, le=100)  # per user and PR
    commands_per_repo_hour: int = Field(default=20, ge=1, le=1000)  # per user, all PRs
    # --- tracking issues ------------------------------------------------------------------
    tracking_issues: bool = True
    max_new_issues_per_hour: int = Field(default=5, ge=0, le=100)  # per repository
    reopen_days: int = Field(default=14, ge=0, le=365)
    issue_label: str = Field(default="flaky-test", min_length=1, max_length=50)
    quiet_label: str = Field(default="flaky-quiet", min_length=1, max_length=50)
    auto_close: AutoClose | None = None  # off by default
    owners: OwnersMode = OwnersMode.SHOW  # the test's owners by CODEOWNERS
    # --- the Checks tab -------------------------------------------------------------------
    # The bot's own check run on the PR's head (needs the App's `checks: write`).
    check_run: bool = False
    check_run_conclusion: CheckRunConclusion = CheckRunConclusion.NEUTRAL
    # --- quarantine (off by default; `quarantine: {}` turns it on with its defaults) ------
    # On, the check run is written on every PR head and is the merge gate (docs/operations.md).
    quarantine: QuarantineSettings | None = None


class LoadedRepoConfig(BaseModel):
    """A repository's settings as read (bot/repo_settings.py), each problem named."""

    config: RepoConfig = Field(default_factory=RepoConfig)
    errors: list[str] = Field(default_factory=list)
    # The files whose keys apply, the one that wins first, as `owner/repo` (`owner/repo:path`
    # off `.github/flaky.yml`); `outside`: one of them is not the repository's own, which
    # the PR comment's footer then says.
    applied: list[str] = Field(default_factory=list)
    outside: bool = False
    # What the PR comment may say: the problems and files, without the names, keys or
    # problems of a private repository other than the repository's own when it is public.
    shown_errors: list[str] = Field(default_factory=list)
    shown_from: list[str] = Field(default_factory=list)
    # For the log only: an organisation's `.github` repository the App could not read.
    notes: list[str] = Field(default_factory=list)


EXTENDS_KEY = "_extends"
# Keys read no more, each with what replaces it.
RETIRED_KEYS = {
    "import_depth": (
        "`import_depth` is no longer read: the import walk has no depth limit; "
        "`imports: {files: N, bytes: N}` sets its budgets"
    ),
}


class ParsedSettings(BaseModel):
    """One settings file alone, read leniently: unknown keys and invalid values are dropped
    and named, the rest kept."""

    config: RepoConfig = Field(default_factory=RepoConfig)
    values: dict[str, Any] = Field(default_factory=dict)  # the valid values of known keys
    extends: Any = None  # its `_extends` value, None when it names no base
    unknown_keys: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)

    def problems(self) -> list[str]:
        return self.errors + [
            RETIRED_KEYS.get(key, f"unknown key {key!r}") for key in self.unknown_keys
        ]


def parse_settings_file(text: str | None) -> ParsedSettings:
    raw, errors = load_mapping(text)
    extends = raw.pop(EXTENDS_KEY, None)
    known = set(RepoConfig.model_fields)
    unknown = sorted(str(k) for k in raw if k not in known)
    config, values, invalid = validate_leniently({k: v for k, v in raw.items() if k in known})
    return ParsedSettings(
        config=config,
        values=values,
        extends=extends,
        unknown_keys=unknown,
        errors=errors + invalid,
    )


def load_mapping(text: str | None) -> tuple[dict[Any, Any], list[str]]:
    """A settings file's YAML mapping, or {} and why not (an absent or empty file: no why)."""
    if text is None or not text.strip():
        return {}, []
    try:
        raw: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return {}, [f"not valid YAML: {_yaml_problem(exc)}"]
    except RecursionError:
        # PyYAML composes nested collections recursively: `[[[[...` a thousand deep.
        return {}, ["not valid YAML: nested too deeply"]
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, ["not a mapping of settings"]
    return raw, []


def validate_leniently(values: dict[str, Any]) -> tuple[RepoConfig, dict[str, Any], list[str]]:
    """The settings from known keys' values, the values kept, and what was dropped and why."""
    errors: list[str] = []
    # Drop what is invalid, as narrowly as possible (one bad pattern keeps the others), and
    # try again; each pass removes at least one value, so this ends.
    while True:
        try:
            return RepoConfig.model_validate(values), values, errors
        except ValidationError as exc:
            problems = exc.errors()
            errors.extend(f"{_where(err['loc'])}: {err['msg']}" for err in problems)
            values = _without(values, [err["loc"] for err in problems])


def _without(values: dict[str, Any], locs: list[tuple[int | str, ...]]) -> dict[str, Any]:
    """`values` less the items errors point at: list elements, else whole keys."""
    rest = dict(values)
    drop: dict[str, set[int]] = {}
    for loc in locs:
        if not loc:
            return {}
        key = str(loc[0])
        if len(loc) > 1 and isinstance(loc[1], int) and isinstance(rest.get(key), list):
            drop.setdefault(key, set()).add(loc[1])
        else:
            rest.pop(key, None)
    for key, indexes in drop.items():
        kept = [v for i, v in enumerate(rest.get(key) or []) if i not in indexes]
        if kept:
            rest[key] = kept
        else:  # nothing of it left: its default, not an empty list (`reports: []` reads none)
            rest.pop(key, None)
    return rest


def _where(loc: tuple[int | str, ...]) -> str:
    """`reports.0.artifact`; a key that is not a plain name is quoted, so a newline or a dot
    in it cannot break the line or pass for a path."""
    return ".".join(
        str(part) if isinstance(part, int) or re.fullmatch(r"[\w-]+", part) else repr(part)
        for part in loc
    )


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's complaint in one line: what and where, without its echo of the file."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{exc.problem}{where}"
    return " ".join(str(exc).split())
