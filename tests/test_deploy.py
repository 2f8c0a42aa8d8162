"""The deployment files and the operations docs agree with the code they deploy.

No container engine runs here, so these files are checked by reading them: variable names
against `Settings`, ports and probe paths against the web app's router, metric names against a
real `Metrics()` registry. The image's HEALTHCHECK command is run for real against the app.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import socket
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot import web as bot_web
from bot.config import RepoConfig, Settings
from bot.handlers import owners, scope
from bot.inbox import Worker
from bot.metrics import Metrics
from bot.store import Delivery
from bot.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCS = ROOT / "docs"

SETTING_NAMES = {name.upper() for name in Settings.model_fields}
DEFAULT_PORT = Settings.model_fields["port"].default
DEFAULT_WEBHOOK_PATH = Settings.model_fields["webhook_path"].default


# --- readers -----------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    instructions = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    return instructions


def dockerfile() -> list[tuple[str, str]]:
    return dockerfile_instructions((DEPLOY / "Dockerfile").read_text())


def only(instructions: list[tuple[str, str]], keyword: str) -> str:
    found = [args for kw, args in instructions if kw == keyword]
    assert len(found) == 1, f"expected one {keyword} in deploy/Dockerfile, found {len(found)}"
    return found[0]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, args in dockerfile():
        if keyword == "ENV":
            for item in shlex.split(args):
                name, _, value = item.partition("=")
                env[name] = value
    return env


def healthcheck_command() -> list[str]:
    _, _, command = only(dockerfile(), "HEALTHCHECK").partition("CMD ")
    parsed: list[str] = json.loads(command)
    return parsed


def env_file_names(text: str) -> tuple[set[str], set[str]]:
    """Names assigned in an env file: (set, commented out as an alternative)."""
    active = set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)=", text, re.MULTILINE))
    commented = set(re.findall(r"^#\s*([A-Z_][A-Z0-9_]*)=", text, re.MULTILINE))
    return active, commented


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def k8s_documents() -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")) + sorted(K8S.glob("*.yaml.example")):
        documents.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return documents


def k8s_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for doc in k8s_documents() if doc["kind"] == kind]


def one_k8s(kind: str) -> dict[str, Any]:
    found = k8s_kind(kind)
    assert len(found) == 1, f"expected one {kind} in deploy/k8s, found {len(found)}"
    return found[0]


def bot_container() -> dict[str, Any]:
    containers: list[dict[str, Any]] = one_k8s("Deployment")["spec"]["template"]["spec"][
        "containers"
    ]
    assert len(containers) == 1
    return containers[0]


def container_port(container: dict[str, Any], port: int | str) -> int:
    """A probe's or Service's port, named or numbered, as the container's port number."""
    for declared in container["ports"]:
        if port in (declared["containerPort"], declared.get("name")):
            number: int = declared["containerPort"]
            return number
    raise AssertionError(f"port {port!r} is not declared by the container")


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(DEPLOY / "docker-compose.yml")
    return loaded


def compose_bot() -> dict[str, Any]:
    """The service built from deploy/Dockerfile."""
    built: list[dict[str, Any]] = [
        service
        for service in compose()["services"].values()
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
    ]
    assert len(built) == 1
    return built[0]


def exposed_metric_names(metrics: Metrics) -> set[str]:
    """Names a PromQL query can use, with the suffixes prometheus-client adds."""
    names: set[str] = set()
    for family in metrics.registry.collect():
        if family.type == "counter":
            names |= {f"{family.name}_total", f"{family.name}_created"}
        elif family.type == "histogram":
            names |= {family.name} | {
                f"{family.name}_{suffix}" for suffix in ("bucket", "sum", "count", "created")
            }
        else:
            names.add(family.name)
    return names


async def _never_dispatched(delivery: Delivery) -> None:
    raise AssertionError("the worker is not started in these tests")


@pytest.fixture
async def bot_app(tmp_path: Path) -> AsyncIterator[web.Application]:
    """The real web app, built as `flakybot serve` builds it, with the default webhook path."""
    store = await SQLiteStore.open(f"sqlite:///{tmp_path / 'routes.sqlite3'}")
    metrics = Metrics()
    yield bot_web.create_app(
        store=store,
        worker=Worker(store, _never_dispatched, metrics),
        metrics=metrics,
        webhook_secret="deploy-test-secret",
        webhook_path=DEFAULT_WEBHOOK_PATH,
    )
    await store.close()


def get_route_of(app: web.Application, handler: object) -> str:
    paths = [
        route.resource.canonical
        for route in app.router.routes()
        if route.method == "GET" and route.handler is handler and route.resource is not None
    ]
    assert len(paths) == 1, f"{handler!r} should serve exactly one GET route, serves {paths}"
    return paths[0]


def get_paths(app: web.Application) -> set[str]:
    return {
        route.resource.canonical
        for route in app.router.routes()
        if route.method == "GET" and route.resource is not None
    }


# --- variable names ----------------------------------------------------------------------


def test_env_example_names_exactly_the_settings() -> None:
    active, commented = env_file_names((DEPLOY / ".env.example").read_text())
    assert active <= SETTING_NAMES, f"not settings: {sorted(active - SETTING_NAMES)}"
    assert commented <= SETTING_NAMES, f"not settings: {sorted(commented - SETTING_NAMES)}"
    assert active | commented >= SETTING_NAMES, (
        f"settings missing from deploy/.env.example: {sorted(SETTING_NAMES - active - commented)}"
    )


def test_env_example_sets_only_one_way_to_give_the_key() -> None:
    active, _ = env_file_names((DEPLOY / ".env.example").read_text())
    # An empty PRIVATE_KEY= would win over PRIVATE_KEY_PATH and yield an empty key.
    assert len(active & {"PRIVATE_KEY", "PRIVATE_KEY_PATH"}) == 1


def test_env_example_defaults_agree_with_settings() -> None:
    text = (DEPLOY / ".env.example").read_text()
    values = dict(re.findall(r"^([A-Z_]+)=(.*)$", text, re.MULTILINE))
    assert values["WEBHOOK_PATH"] == DEFAULT_WEBHOOK_PATH
    assert int(values["PORT"]) == DEFAULT_PORT
    assert values["DATABASE_URL"].startswith("postgresql://")


def test_compose_bot_takes_only_settings_from_its_environment() -> None:
    bot = compose_bot()
    environment = bot.get("environment", {})
    names = (
        set(environment)
        if isinstance(environment, dict)
        else {item.split("=", 1)[0] for item in environment}
    )
    assert names <= SETTING_NAMES, f"not settings: {sorted(names - SETTING_NAMES)}"
    env_files = bot["env_file"] if isinstance(bot["env_file"], list) else [bot["env_file"]]
    # The env file is the filled-in copy of .env.example, whose names are checked above.
    assert env_files == [".env"]
    assert (DEPLOY / ".env.example").is_file()


def test_k8s_env_sources_hold_only_settings() -> None:
    container = bot_container()
    config_maps = {doc["metadata"]["name"]: doc for doc in k8s_kind("ConfigMap")}
    secrets = {doc["metadata"]["name"]: doc for doc in k8s_kind("Secret")}
    sources = container["envFrom"]
    config_refs = [s["configMapRef"]["name"] for s in sources if "configMapRef" in s]
    secret_refs = [s["secretRef"]["name"] for s in sources if "secretRef" in s]
    assert config_refs and secret_refs, "env from both a ConfigMap and a Secret"
    names = {item["name"] for item in container.get("env", [])}
    for name in config_refs:
        names |= set(config_maps[name]["data"])
    for name in secret_refs:
        assert "stringData" in secrets[name]
        names |= set(secrets[name]["stringData"])
    assert names <= SETTING_NAMES, f"not settings: {sorted(names - SETTING_NAMES)}"
    assert {"APP_ID", "WEBHOOK_SECRET", "DATABASE_URL"} <= names


def test_k8s_private_key_path_is_the_mounted_secret_file() -> None:
    container = bot_container()
    pod = one_k8s("Deployment")["spec"]["template"]["spec"]
    config = one_k8s("ConfigMap")["data"]
    key_path = Path(config["PRIVATE_KEY_PATH"])
    mount = next(m for m in container["volumeMounts"] if Path(m["mountPath"]) == key_path.parent)
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    secret = next(
        s for s in k8s_kind("Secret") if s["metadata"]["name"] == volume["secret"]["secretName"]
    )
    assert key_path.name in secret["stringData"]


def test_compose_private_key_path_is_the_mounted_secret_file() -> None:
    values = dict(
        re.findall(r"^([A-Z_]+)=(.*)$", (DEPLOY / ".env.example").read_text(), re.MULTILINE)
    )
    key_path = Path(values["PRIVATE_KEY_PATH"])
    assert key_path.parent == Path("/run/secrets")
    assert key_path.name in compose_bot()["secrets"]
    assert key_path.name in compose()["secrets"]


# --- ports, probes and paths -------------------------------------------------------------


async def test_k8s_probes_and_service_reach_the_apps_routes(bot_app: web.Application) -> None:
    container = bot_container()
    readiness, liveness = container["readinessProbe"], container["livenessProbe"]
    assert readiness["httpGet"]["path"] == get_route_of(bot_app, bot_web.readyz)
    assert liveness["httpGet"]["path"] == get_route_of(bot_app, bot_web.healthz)
    assert container_port(container, readiness["httpGet"]["port"]) == DEFAULT_PORT
    assert container_port(container, liveness["httpGet"]["port"]) == DEFAULT_PORT
    assert int(one_k8s("ConfigMap")["data"]["PORT"]) == DEFAULT_PORT
    service_ports = one_k8s("Service")["spec"]["ports"]
    assert [container_port(container, p["targetPort"]) for p in service_ports] == [DEFAULT_PORT]


def test_k8s_webhook_path_is_the_default() -> None:
    assert one_k8s("ConfigMap")["data"]["WEBHOOK_PATH"] == DEFAULT_WEBHOOK_PATH


def test_dockerfile_port_and_host_defaults_agree_with_settings() -> None:
    env = dockerfile_env()
    assert int(env["PORT"]) == DEFAULT_PORT
    assert env["HOST"] == "0.0.0.0"
    assert [int(p) for p in only(dockerfile(), "EXPOSE").split()] == [DEFAULT_PORT]
    assert env.keys() & SETTING_NAMES >= {"HOST", "PORT"}


async def _run_healthcheck(port: int) -> int:
    command = healthcheck_command()
    assert command[0] == "python"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *command[1:],
        env={"PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), timeout=30)


async def test_dockerfile_healthcheck_passes_against_the_running_app(
    bot_app: web.Application,
) -> None:
    server = TestServer(bot_app, host="127.0.0.1")
    await server.start_server()
    try:
        assert await _run_healthcheck(server.port) == 0  # type: ignore[arg-type]
    finally:
        await server.close()


async def test_dockerfile_healthcheck_fails_when_nothing_answers() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port: int = probe.getsockname()[1]
    assert await _run_healthcheck(closed_port) != 0


async def test_compose_healthcheck_and_ports_agree_with_the_app(bot_app: web.Application) -> None:
    bot = compose_bot()
    command = " ".join(bot["healthcheck"]["test"])
    url = urlsplit(re.findall(r"https?://[^'\"\s]+", command)[0])
    assert (url.hostname, url.port) == ("127.0.0.1", DEFAULT_PORT)
    assert url.path == get_route_of(bot_app, bot_web.healthz)
    assert [int(str(p).rsplit(":", 1)[1]) for p in bot["ports"]] == [DEFAULT_PORT]
    assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "healthcheck" in compose()["services"]["postgres"]


async def test_docs_webhook_urls_use_the_default_path(bot_app: web.Application) -> None:
    posts = {
        route.resource.canonical
        for route in bot_app.router.routes()
        if route.method == "POST" and route.resource is not None
    }
    assert posts == {DEFAULT_WEBHOOK_PATH, "/login"}  # /login: the dashboard's sign-in form
    text = (DOCS / "operations.md").read_text()
    # "https://HOST/" alone is the manifest flow's redirect page, not a webhook URL.
    webhook_urls = set(re.findall(r"https://HOST(/[^\s`'\")]+)", text))
    assert webhook_urls == {DEFAULT_WEBHOOK_PATH}


async def test_docs_name_only_routes_the_app_serves(bot_app: web.Application) -> None:
    served = get_paths(bot_app)
    text = (DOCS / "operations.md").read_text()
    mentioned = set(re.findall(r"`(?:GET )?(/(?:healthz|readyz|metrics))`", text))
    assert mentioned and mentioned <= served


# --- metrics -----------------------------------------------------------------------------


def test_operations_metric_names_exist_in_the_registry() -> None:
    exposed = exposed_metric_names(Metrics())
    mentioned = set(re.findall(r"\bflakybot_[a-z0-9_]+", (DOCS / "operations.md").read_text()))
    assert mentioned, "docs/operations.md names no metric"
    assert mentioned <= exposed, f"not exposed: {sorted(mentioned - exposed)}"


def test_operations_documents_every_metric() -> None:
    text = (DOCS / "operations.md").read_text()
    for family in Metrics().registry.collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        assert f"`{name}`" in text, f"docs/operations.md does not describe {name}"


# --- configuration docs ------------------------------------------------------------------


def test_configuration_documents_every_setting_with_its_default() -> None:
    rows = {
        match[0]: match[1]
        for match in re.findall(
            r"^\| `([A-Z_]+)` \|.*\| ([^|]+) \|$", (DOCS / "configuration.md").read_text(), re.M
        )
    }
    assert set(rows) == SETTING_NAMES, f"differ: {sorted(set(rows) ^ SETTING_NAMES)}"
    for name, field in Settings.model_fields.items():
        if field.is_required() or field.default is None:
            continue
        default = field.default
        shown = (
            str(int(default))
            if isinstance(default, float) and default.is_integer()
            else str(default)
        )
        assert f"`{shown}`" in rows[name.upper()], f"{name.upper()}: {rows[name.upper()]}"


def test_configuration_documents_every_repo_config_key() -> None:
    text = (DOCS / "configuration.md").read_text()
    for key, field in RepoConfig.model_fields.items():
        default = field.get_default(call_default_factory=True)
        shown = str(default).lower() if isinstance(default, bool) else str(default)
        assert re.search(rf"^\| `{key}` \|[^\n]*\| `{re.escape(shown)}`[^|]*\|", text, re.M), key


# --- the image and the manifests ---------------------------------------------------------


def test_dockerfile_builds_a_non_root_image_running_serve() -> None:
    instructions = dockerfile()
    stages = [args for keyword, args in instructions if keyword == "FROM"]
    # The wheel is built in a stage of its own; the image is the last stage.
    assert all(re.fullmatch(r"python:3\.12-slim(@sha256:[0-9a-f]+)?( AS \w+)?", s) for s in stages)
    assert " AS " not in stages[-1]
    user = only(instructions, "USER").split(":")[0]
    assert user.isdigit() and int(user) != 0
    security = one_k8s("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] == int(user)
    assert json.loads(only(instructions, "CMD")) == ["flakybot", "serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "flakybot" in scripts


def test_dockerfile_copies_what_the_package_build_needs_and_the_ignore_file_keeps_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    copied = set()
    for keyword, args in dockerfile():
        if keyword == "COPY":
            copied |= {source.rstrip("/") for source in args.split()[:-1]}
    assert {"pyproject.toml", project["readme"], "bot"} <= copied
    kept = {
        line[1:].rstrip("/")
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    assert copied <= kept
    assert project["optional-dependencies"]["hyperscan"] == ["hyperscan>=0.9"]


def test_the_multi_platform_image_build_is_documented() -> None:
    command = "docker buildx build --platform linux/amd64,linux/arm64 -f deploy/Dockerfile"
    assert command in (DEPLOY / "Dockerfile").read_text()
    assert command in (ROOT / "README.md").read_text()


def test_k8s_deployment_runs_two_hardened_replicas() -> None:
    deployment = one_k8s("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = bot_container()
    assert deployment["spec"]["replicas"] == 2
    assert "readinessProbe" in container and "livenessProbe" in container
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind])
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
    assert "emptyDir" in next(v for v in pod["volumes"] if v["name"] == tmp["name"])
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert one_k8s("Service")["spec"]["selector"].items() <= labels.items()
    budget = one_k8s("PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


# What `flakybot serve` holds before any cache or handler (imports, loop, store): measured
# about 75 MiB of imports, with room for the rest.
PROCESS_MIB = 128


def test_k8s_memory_limit_holds_the_caches_and_the_log_tails() -> None:
    """36 heads of a 25,000-file repository once took `serve` to 863 MiB, over the 768 Mi
    limit: the caches are bounded by CACHE_MEMORY_MB now, and the limit must hold them."""
    config = one_k8s("ConfigMap")["data"]
    limit = bot_container()["resources"]["limits"]["memory"]
    assert limit.endswith("Mi")
    held = (
        PROCESS_MIB
        + int(config["CACHE_MEMORY_MB"])
        + (scope.PARSED_SETTINGS_BYTES + owners.PARSED_CODEOWNERS_BYTES) // 2**20
        + int(config["WORKER_CONCURRENCY"]) * int(config["LOG_CAP_BYTES"]) // 2**20
    )
    assert held <= int(limit.removesuffix("Mi")), held


def test_secret_templates_hold_placeholders_only() -> None:
    template = K8S / "secret.yaml.example"
    for path in (template, DEPLOY / ".env.example"):
        assert "BEGIN" not in path.read_text(), f"{path.name} holds key material"
    secrets = [doc for doc in yaml.safe_load_all(template.read_text()) if doc]
    assert secrets and all(doc["kind"] == "Secret" for doc in secrets)
    for secret in secrets:
        assert "data" not in secret
        assert all("replace-with" in str(value) for value in secret["stringData"].values())
    # kubectl apply -f deploy/k8s/ reads *.yaml only: the template must never be applied.
    applied = [doc for p in K8S.glob("*.yaml") for doc in yaml.safe_load_all(p.read_text()) if doc]
    assert applied and not any(doc["kind"] == "Secret" for doc in applied)
