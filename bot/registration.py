"""Registering the GitHub App from `app.yml` (GitHub's manifest flow) and keeping what GitHub
hands back in `.env`, for `flakybot setup` (bot/setup_page.py holds the page and the calls).

GitHub's flow: a form posts the manifest (JSON) to `settings/apps/new` (an organisation's:
`organizations/ORG/settings/apps/new`) with a random `state`; GitHub asks its user to
confirm, then redirects to the manifest's `redirect_url` with `?code=&state=`; within an
hour `POST /app-manifests/{code}/conversions`, without credentials, answers the App with its
id, private key and webhook secret, once.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import yaml

# The checkout's manifest, when the command is run elsewhere (a wheel does not carry it).
CHECKOUT_MANIFEST = Path(__file__).resolve().parents[1] / "app.yml"
# What setup writes; the names Settings reads (bot/config.py), and the App's page.
ENV_KEYS = ("APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET", "APP_URL")
_ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
# Values written as they are; anything else is quoted (`env_line`).
_PLAIN = re.compile(r"[A-Za-z0-9_./:@+,=%\\ -]*")
_CONTROL = frozenset({"Cc", "Cf", "Zl", "Zp"})


class SetupError(Exception):
    """Why setup cannot go on, in words for the person who ran it; `status` is the local
    page's answer when it happens there."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RegisteredApp:
    """The part of GitHub's conversion answer that setup keeps."""

    id: int
    slug: str
    html_url: str
    pem: str
    webhook_secret: str

    @property
    def install_url(self) -> str:
        return f"{self.html_url}/installations/new"


def find_manifest(given: Path | None) -> Path:
    """`--manifest`, else `app.yml` in the current folder, else the checkout's."""
    for candidate in [given] if given is not None else [Path("app.yml"), CHECKOUT_MANIFEST]:
        if candidate.is_file():
            return candidate
    if given is not None:
        raise SetupError(f"no such manifest: {given}")
    raise SetupError("no app.yml here: run it from the repository's folder or give --manifest")


def load_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SetupError(f"cannot read {path}: {exc}") from None
    if not isinstance(manifest, dict):
        raise SetupError(f"{path} is not a manifest (a YAML mapping)")
    return manifest


def web_address(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise SetupError(f"{what} is not a web address: give it as https://host/path")
    return url.rstrip("/") if parts.path in ("", "/") else url


def manifest_for(
    manifest: dict[str, Any], *, webhook_url: str, redirect_url: str, name: str | None
) -> dict[str, Any]:
    """`app.yml` with this deployment's webhook and the page GitHub sends the code to."""
    hook = dict(manifest.get("hook_attributes") or {})
    hook["url"] = webhook_url
    filled = {**manifest, "hook_attributes": hook, "redirect_url": redirect_url}
    if name:
        filled["name"] = name
    return filled


def new_app_url(github_url: str, org: str | None, state: str) -> str:
    """Where the form posts: the user's new-App page, or the organisation's."""
    base = github_url.rstrip("/")
    account = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{base}{account}/settings/apps/new?state={quote(state, safe='')}"


def app_settings_url(github_url: str, org: str | None, slug: str) -> str:
    """The App's settings page, where keys and the webhook secret are made."""
    account = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{github_url.rstrip('/')}{account}/settings/apps/{quote(slug, safe='')}"


def registered_app(answer: Any) -> RegisteredApp:
    """The conversion's 201 body, refused when it lacks what `.env` needs."""
    try:
        return RegisteredApp(
            id=int(answer["id"]),
            slug=str(answer["slug"]),
            html_url=str(answer["html_url"]).rstrip("/"),
            pem=_text(answer["pem"]),
            webhook_secret=_text(answer["webhook_secret"]),
        )
    except (KeyError, TypeError, ValueError):
        raise SetupError("GitHub's answer holds no App id, key or webhook secret") from None


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("not a string")
    return value


def env_lines(app: RegisteredApp) -> dict[str, str]:
    """One line each. The key goes on one line with literal `\\n`: Settings turns them into
    line breaks (bot/config.py), python-dotenv, Docker Compose and `docker run --env-file`
    all read such a line as it is, and none of them reads a multi-line value the same way."""
    return {
        "APP_ID": str(app.id),
        "PRIVATE_KEY": app.pem.strip().replace("\r\n", "\n").replace("\n", "\\n"),
        "WEBHOOK_SECRET": app.webhook_secret,
        "APP_URL": app.html_url,
    }


def refuse_existing(path: Path, *, force: bool) -> None:
    """Refuse, before anything is registered, a `.env` that setup may not or cannot write:
    GitHub hands the App's key out once, so a file that cannot take it must be known first.
    A link counts as existing even when it leads nowhere (writing through it is refused)."""
    if os.path.lexists(path) and not force:
        raise SetupError(
            f"{path} exists: setup will not overwrite it. Move it away, or give --force to "
            f"replace its {', '.join(ENV_KEYS)} lines and keep the others",
            409,
        )
    try:
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SetupError(
            f"{path} could not be written ({reason}): nothing was registered", 500
        ) from None
    os.close(fd)
    os.unlink(probe)


def write_env(path: Path, values: dict[str, str], *, force: bool) -> None:
    """Write `.env` readable by its owner alone (0600; Windows keeps its own ACLs). Without
    `force` an existing file is never touched, even one made since the start; with it, the
    keys written replace their lines and every other line is kept."""
    lines = [env_line(key, value) for key, value in values.items()]
    if not force:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            refuse_existing(path, force=False)
            raise
        _write_all(fd, lines)
        return
    kept = _other_lines(_existing_lines(path), set(values))
    # An unpredictable name, made new (mkstemp: O_EXCL, mode 0600): nothing planted in the
    # folder can receive the key; the rename then replaces `.env` itself, never a link's target.
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        _write_all(fd, kept + lines)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def env_line(key: str, value: str) -> str:
    """`KEY=value` on one line, read back exactly by python-dotenv (which Settings uses): a
    plain value as it is (Docker's `--env-file` reads it too), any other in single quotes
    (no interpolation there; backslashes and quotes escaped). A value with a line break or
    another control character is refused: it could add lines to the file; so is `${`, which
    python-dotenv expands in every kind of value."""
    if any(unicodedata.category(c) in _CONTROL for c in value):
        raise SetupError(f"GitHub's answer holds a control character in {key}: not written")
    if "${" in value:
        raise SetupError(f"GitHub's answer holds `${{` in {key}: not written")
    if _PLAIN.fullmatch(value) and value == value.strip() and " #" not in value:
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"{key}='{escaped}'"


def _write_all(fd: int, lines: list[str]) -> None:
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
        stream.write("".join(line + "\n" for line in lines))


def _existing_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def _other_lines(lines: list[str], replaced: set[str]) -> list[str]:
    """The lines of keys not replaced; a replaced key's quoted value may span lines (a
    multi-line PEM), and those go with it."""
    kept: list[str] = []
    open_quote = ""
    for line in lines:
        if open_quote:
            open_quote = "" if open_quote in line else open_quote
            continue
        match = _ENV_LINE.match(line)
        if match is None or match.group(1) not in replaced:
            kept.append(line)
            continue
        value = line[match.end() :].strip()
        if value[:1] in ('"', "'") and value[1:].find(value[0]) < 0:
            open_quote = value[0]
    return kept
