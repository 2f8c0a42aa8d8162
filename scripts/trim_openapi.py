"""Cut GitHub's OpenAPI descriptions to what the simulator serves, for tests/fixtures/corpus.

The simulator (bot/sim) is checked against GitHub's own schemas (tests/test_sim_openapi.py,
test_sim_webhooks.py, test_events.py). The published descriptions are 13 MB (REST) and 5 MB
(webhooks); the tests need the operations the simulator answers and the webhooks it sends,
with every component they refer to, transitively. Examples are dropped: no test reads them.
The output is a deterministic function of the input, so running this again on the same
release gives the same bytes (tests/fixtures/corpus/openapi/INDEX.md names the releases).

    python scripts/trim_openapi.py rest FULL/api.github.com.json > \\
        tests/fixtures/corpus/openapi/github-rest-subset.openapi.json
    python scripts/trim_openapi.py webhooks FULL/api.github.com.json > \\
        tests/fixtures/corpus/openapi/webhooks-schema.api.github.com.json

The input may be a file this script already cut: cutting it again changes nothing.
Simulator routes GitHub's REST description does not hold (GraphQL, the blob host) are named
on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.sim import Simulator, builtin_scenario
from bot.sim.routes import Routes

# The webhooks the simulator sends (bot/sim/webhooks.py), by their name in the description.
SENT_WEBHOOKS = (
    "check-run-completed",
    "issue-comment-created",
    "pull-request-synchronize",
    "workflow-job-completed",
)
_KEPT_TOP = ("openapi", "info", "servers", "externalDocs")
_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def simulator_routes() -> list[tuple[str, str]]:
    """(method, path template) of every route the simulator serves."""
    app = web.Application()
    Routes(Simulator(builtin_scenario(), webhook_secret="unused")).install(app)
    routes = []
    for route in app.router.routes():
        if route.method in ("GET", "POST", "PATCH", "PUT", "DELETE") and route.resource:
            routes.append((route.method.lower(), route.resource.canonical))
    return routes


def matches(served: str, documented: str) -> bool:
    """A documented template's variable segment takes any segment (`{archive_format}`:
    `zip`); a literal segment only itself."""
    ours, theirs = served.strip("/").split("/"), documented.strip("/").split("/")
    if len(ours) != len(theirs):
        return False
    for mine, doc in zip(ours, theirs, strict=True):
        if doc.startswith("{"):
            continue
        if mine != doc:
            return False
    return True


def trim_rest(document: dict[str, Any]) -> dict[str, Any]:
    routes = simulator_routes()
    paths: dict[str, Any] = {}
    matched: set[tuple[str, str]] = set()
    for template, item in document["paths"].items():
        kept = {}
        for method, operation in item.items():
            served = [r for r in routes if r[0] == method and matches(r[1], template)]
            if method not in _METHODS:
                kept[method] = operation  # shared parameters of the path
            elif served:
                kept[method] = operation
                matched.update(served)
        if any(m in _METHODS for m in kept):
            paths[template] = kept
    for method, path in sorted(set(routes) - matched):
        print(f"not in the description: {method.upper()} {path}", file=sys.stderr)
    return _with_components(document, {"paths": _without_examples(paths)})


def trim_webhooks(document: dict[str, Any]) -> dict[str, Any]:
    webhooks = {name: document["webhooks"][name] for name in SENT_WEBHOOKS}
    return _with_components(document, {"webhooks": _without_examples(webhooks)})


def _with_components(document: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The document's head, `body`, and the components it refers to, in the source order."""
    needed: set[tuple[str, str]] = set()
    pending = [body]
    while pending:
        for kind, name in _refs(pending.pop()):
            if (kind, name) not in needed:
                needed.add((kind, name))
                pending.append(document["components"][kind][name])
    components = {
        kind: {name: value for name, value in entries.items() if (kind, name) in needed}
        for kind, entries in document["components"].items()
    }
    used_tags = {tag for operation in _operations(body) for tag in operation.get("tags", [])}
    head = {key: document[key] for key in _KEPT_TOP if key in document}
    tags = [tag for tag in document.get("tags", []) if tag["name"] in used_tags]
    return {
        **head,
        **({"tags": tags} if tags else {}),
        **body,
        "components": {kind: entries for kind, entries in components.items() if entries},
    }


def _refs(node: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/"):
                _, _, kind, name = ref.split("/", 3)
                found.append((kind, name))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _operations(body: dict[str, Any]) -> list[dict[str, Any]]:
    items = [*body.get("paths", {}).values(), *body.get("webhooks", {}).values()]
    return [op for item in items for method, op in item.items() if method in _METHODS]


def _without_examples(node: Any) -> Any:
    """`node` without the `examples` of its media types (whole responses, tens of KB each);
    a schema's own `examples` stay."""
    if isinstance(node, dict):
        media_type = "schema" in node
        return {
            k: _without_examples(v) for k, v in node.items() if not (media_type and k == "examples")
        }
    if isinstance(node, list):
        return [_without_examples(v) for v in node]
    return node


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["rest", "webhooks"])
    parser.add_argument("source", type=Path, help="the published description (JSON)")
    args = parser.parse_args()
    document = json.loads(args.source.read_text(encoding="utf-8"))
    trimmed = trim_rest(document) if args.kind == "rest" else trim_webhooks(document)
    sys.stdout.write(json.dumps(trimmed, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
