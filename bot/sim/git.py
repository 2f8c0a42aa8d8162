"""Git data as GitHub serves it: recursive trees (truncated past a limit) and blobs read
in batches through GraphQL, from the scenario's files at each ref."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

Json = dict[str, Any]
GRAPHQL_DOCS = "https://docs.github.com/graphql"
# GitHub cuts a blob's `text` in GraphQL past this size and says so with `isTruncated`.
BLOB_TEXT_LIMIT = 512 * 1024
_ALIAS = re.compile(r"(\w+)\s*:\s*object\s*\(\s*oid\s*:\s*\"([^\"]*)\"\s*\)")
# `object(expression: "sha:path")`: a file at a commit (the string as JSON reads it).
_EXPRESSION = re.compile(r"(\w+)\s*:\s*object\s*\(\s*expression\s*:\s*(\"(?:[^\"\\]|\\.)*\")\s*\)")
_REPOSITORY = re.compile(r"repository\s*\(\s*owner\s*:\s*\$owner\s*,\s*name\s*:\s*\$name\s*\)")


def blob_sha(data: bytes) -> str:
    """Git's object id of a blob: what a tree and GraphQL's `oid` name it by."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def as_bytes(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode()


def tree(
    files: Mapping[str, str | bytes], sha: str, repo_api: str, *, recursive: bool, limit: int
) -> Json:
    """GET /git/trees/{sha}: every blob and folder (or the top level only), in git's
    order; past `limit` entries the list stops and `truncated` is true."""
    entries: dict[str, Json] = {}
    for path in sorted(files):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            entries.setdefault(folder, _entry(folder, "tree", folder.encode(), repo_api))
        data = as_bytes(files[path])
        entries[path] = _entry(path, "blob", data, repo_api)
    listed = [e for p, e in sorted(entries.items()) if recursive or "/" not in p]
    return {
        "sha": sha,
        "url": f"{repo_api}/git/trees/{sha}",
        "tree": listed[:limit],
        "truncated": len(listed) > limit,
    }


def _entry(path: str, kind: str, data: bytes, repo_api: str) -> Json:
    if kind == "tree":
        sha = hashlib.sha1(b"tree:" + data, usedforsecurity=False).hexdigest()
        return {
            "path": path,
            "mode": "040000",
            "type": "tree",
            "sha": sha,
            "url": f"{repo_api}/git/trees/{sha}",
        }
    sha = blob_sha(data)
    return {
        "path": path,
        "mode": "100644",
        "type": "blob",
        "sha": sha,
        "size": len(data),
        "url": f"{repo_api}/git/blobs/{sha}",
    }


def graphql(
    body: bytes,
    blobs: Mapping[str, bytes],
    owner: str,
    name: str,
    at: Callable[[str, str], bytes | None] = lambda ref, path: None,
) -> web.Response:
    """POST /graphql for the one query shape the bot sends: blobs by `object(oid:)` or
    `object(expression: "ref:path")` aliases under `repository(owner:, name:)` (`at` reads
    a path at a ref). Anything else is answered as GitHub answers a query it cannot parse
    (200, `errors`, no `data`)."""
    try:
        payload = json.loads(body)
        query, variables = payload["query"], payload.get("variables") or {}
    except (ValueError, KeyError, TypeError):
        return web.json_response(
            {"message": "Problems parsing JSON", "documentation_url": GRAPHQL_DOCS}, status=400
        )
    if not isinstance(query, str) or not _REPOSITORY.search(query):
        return web.json_response(
            {"errors": [{"message": "Parse error: the simulator reads blob queries only"}]}
        )
    wanted = (variables.get("owner", ""), variables.get("name", ""))
    if (wanted[0].lower(), wanted[1].lower()) != (owner.lower(), name.lower()):
        return web.json_response(
            {
                "data": {"repository": None},
                "errors": [
                    {
                        "type": "NOT_FOUND",
                        "path": ["repository"],
                        "locations": [{"line": 2, "column": 3}],
                        "message": "Could not resolve to a Repository with the name "
                        f"'{wanted[0]}/{wanted[1]}'.",
                    }
                ],
            }
        )
    found = {alias: _blob(blobs.get(oid)) for alias, oid in _ALIAS.findall(query)}
    for alias, literal in _EXPRESSION.findall(query):
        ref, _, path = json.loads(literal).partition(":")
        found[alias] = _blob(at(ref, path))
    return web.json_response({"data": {"repository": found}})


def _blob(data: bytes | None) -> Json | None:
    if data is None:
        return None
    if b"\0" in data[:8000]:
        return {"text": None, "isBinary": True, "isTruncated": False, "byteSize": len(data)}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # GitHub: "Returns null if unable to determine the encoding".
        return {"text": None, "isBinary": None, "isTruncated": False, "byteSize": len(data)}
    cut = len(data) > BLOB_TEXT_LIMIT
    if cut:
        text = data[:BLOB_TEXT_LIMIT].decode("utf-8", errors="ignore")
    return {"text": text, "isBinary": False, "isTruncated": cut, "byteSize": len(data)}
