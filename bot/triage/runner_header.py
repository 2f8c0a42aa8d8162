"""What a GitHub Actions job log says about its runner in the lines it opens with.

Every job log starts with the runner's own header: self-hosted runners print
`Runner name: '…'` (and its group and machine); GitHub-hosted ones print their operating
system and runner image in groups:

    ##[group]Operating System
    Ubuntu
    24.04.4
    LTS
    ##[endgroup]
    ##[group]Runner Image
    Image: ubuntu-24.04
    Version: 20260816.277.1

Read from the log the bot already streams for a failed job: no call of its own. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel

# The header ends before the first step runs; it is read no further than this.
HEADER_LINES = 400
_NAME = re.compile(r"^\ufeff?Runner name: '(?P<name>[^']{1,200})'\s*$")
_GROUP = re.compile(r"^##\[group\](?P<title>.*)$")
_ENDGROUP = "##[endgroup]"
_FIRST_STEP = re.compile(r"^(?:Complete job name:|##\[group\]Run )")
_IMAGE = re.compile(r"^(?P<key>Image|Version): (?P<value>\S{1,100})\s*$")


class RunnerHeader(BaseModel):
    """The runner as a job's log names it; a field is None when the log does not say."""

    name: str | None = None  # "i-0fc893cd09f13bc2a": self-hosted runners print it
    os: str | None = None  # "Linux", "Windows", "macOS" (GitHub's `runner.os` names)
    image: str | None = None  # "ubuntu-24.04 20260816.277.1": GitHub-hosted runners


def os_named(text: str) -> str | None:
    """GitHub's `runner.os` name for the system a header or a runner label names, or None
    when it names none it knows: "Ubuntu", "Microsoft Windows Server 2022", "macOS",
    "ubuntu-latest", "windows-2022", "macos-14-arm64", a self-hosted runner's "Linux"."""
    word = text.strip().lower()
    if word.startswith(("windows", "microsoft windows", "win-")):
        return "Windows"
    if word.startswith(("macos", "mac os", "osx")):
        return "macOS"
    if word.startswith(("ubuntu", "linux", "debian", "centos", "fedora", "rhel", "red hat")):
        return "Linux"
    return None


def os_of_labels(labels: Iterable[str]) -> str | None:
    """The system a job's `runs-on` labels name, when exactly one is named."""
    named = {os for os in map(os_named, labels) if os is not None}
    return named.pop() if len(named) == 1 else None


def read_runner_header(lines: Iterable[str]) -> RunnerHeader | None:
    """The runner named by a job log's opening lines (cleaned of timestamps), or None when
    they name nothing: not a GitHub Actions log, or its start was not read."""
    name = os = None
    image: dict[str, str] = {}
    group: str | None = None
    first = False  # the line is the first of its group
    for count, line in enumerate(lines):
        if count >= HEADER_LINES or _FIRST_STEP.match(line):
            break
        if (found := _NAME.match(line)) is not None:
            name = found.group("name")
        elif (opened := _GROUP.match(line)) is not None:
            group, first = opened.group("title").strip(), True
            continue
        elif line.strip() == _ENDGROUP:
            group = None
        elif group == "Operating System" and first and os is None:
            os = os_named(line)
        elif group == "Runner Image" and (pair := _IMAGE.match(line)) is not None:
            image.setdefault(pair.group("key"), pair.group("value"))
        first = False
    shown = " ".join(image[k] for k in ("Image", "Version") if k in image) or None
    if name is None and os is None and shown is None:
        return None
    return RunnerHeader(name=name, os=os, image=shown)
