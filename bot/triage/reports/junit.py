"""Failed tests from JUnit XML, in the dialects CI tools write.

pytest and unittest-xml-reporting, jest-junit, vitest, mocha-junit-reporter, Maven Surefire
(with its `flakyFailure`/`rerunFailure` retry records, which nextest writes too),
go-junit-report, Bazel's test.xml, and hand-made files. Suites may nest. A test is named in
its framework's own form; several `<testcase>` elements with one name are one test run
several times.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.messages import error_message
from bot.triage.reports.traces import Frame, location, repo_frames, trace_paths
from bot.triage.reports.xml_safe import local_name
from bot.triage.signature import signature

SOURCE = "junit"
# How jest and vitest join a test's file, describe blocks and title (U+203A).
TITLE_SEPARATOR = " \u203a "

_FAILED = frozenset({"failure", "error"})
_FLAKY = frozenset({"flakyFailure", "flakyError"})
_RERUN = frozenset({"rerunFailure", "rerunError"})
_OUTPUT = frozenset({"system-out", "system-err"})
_JS_FILE = re.compile(r"\.(?:[cm]?[jt]sx?)$")
_GO_TEST = re.compile(r"^(?:Test|Example|Benchmark|Fuzz)\w*(?:/|$)")
_JAVA_CLASS = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
_JAVA_METHOD = re.compile(r"^[A-Za-z_$][\w$]*(?:[(\[]|$)")
# Frameworks that name their report's root or suite after themselves.
_NAMED_BY_TOOL = {
    "pytest": "pytest",
    "pytest tests": "pytest",
    "jest tests": "jest",
    "vitest tests": "vitest",
    "mocha tests": "mocha",
    "nextest-run": "nextest",
}


@dataclass(frozen=True)
class _Suite:
    """What enclosing `<testsuites>`/`<testsuite>` elements say about their test cases."""

    tool: str | None = None
    go: bool = False
    name: str = ""
    file: str = ""


@dataclass
class _Run:
    """One `<testcase>` element's outcome."""

    failed: int
    total: int
    message: str
    traces: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


def parse_junit(root: Element) -> tuple[list[Failure], int]:
    """The failed tests of a JUnit XML document and the number of distinct tests in it."""
    runs: dict[str, list[tuple[Element, _Suite, _Run]]] = {}
    for case, suite in _cases(root):
        run = _run(case)
        if run is None:
            continue
        runs.setdefault(_identify(case, suite, run)[0], []).append((case, suite, run))
    failures = [_failure(entries) for entries in runs.values()]
    return [f for f in failures if f is not None], len(runs)


def _cases(root: Element) -> Iterator[tuple[Element, _Suite]]:
    stack: list[tuple[Element, _Suite]] = [(root, _Suite())]
    while stack:
        element, outer = stack.pop()
        tag = local_name(element)
        if tag == "testcase":
            yield element, outer
        elif tag in ("testsuites", "testsuite"):
            suite = _enter(element, outer)
            children = [(child, suite) for child in element]
            stack.extend(reversed(children))


def _enter(element: Element, outer: _Suite) -> _Suite:
    name = element.get("name") or ""
    properties = {
        prop.get("name")
        for props in element
        if local_name(props) == "properties"
        for prop in props
        if local_name(prop) == "property"
    }
    return _Suite(
        tool=_NAMED_BY_TOOL.get(name.lower(), outer.tool),
        go=outer.go or "go.version" in properties,
        name=name if local_name(element) == "testsuite" else outer.name,
        file=element.get("file") or outer.file,
    )


def _run(case: Element) -> _Run | None:
    """The case's outcome; None when it was skipped and never ran."""
    failed = [c for c in case if local_name(c) in _FAILED]
    flaky = [c for c in case if local_name(c) in _FLAKY]
    reruns = [c for c in case if local_name(c) in _RERUN]
    skipped = any(local_name(c) == "skipped" for c in case)
    output = [c.text or "" for c in case if local_name(c) in _OUTPUT]
    if failed:
        attempts = 1 + len(reruns)
        return _Run(attempts, attempts, _joined(failed), _texts(failed + reruns), output)
    if flaky:
        return _Run(len(flaky), len(flaky) + 1, _joined(flaky), _texts(flaky), output)
    if skipped:
        return None
    return _Run(0, 1, "", [], output)


def _joined(elements: list[Element]) -> str:
    messages = (
        error_message(e.get("message") or "", e.get("type") or "", _text(e)) for e in elements
    )
    return "\n".join(dict.fromkeys(m for m in messages if m))


def _text(element: Element) -> str:
    """An element's own text, or its `<stackTrace>` child's (Surefire's retry records)."""
    traces = [c.text or "" for c in element if local_name(c) == "stackTrace"]
    return (element.text or "") + "".join(traces)


def _texts(elements: list[Element]) -> list[str]:
    return [(e.get("message") or "") + "\n" + _text(e) for e in elements]


def _identify(case: Element, suite: _Suite, run: _Run) -> tuple[str, str, str | None, str]:
    """(test id, name, repo-relative file, framework) in the framework's own form."""
    classname = (case.get("classname") or "").strip()
    name = (case.get("name") or "").strip()
    file_attr = _repo_path(case.get("file") or suite.file)
    if suite.go or ("/" in classname and _GO_TEST.match(name)):
        # go-junit-report names a package that failed outside any test (a panic in init,
        # a build failure) "Failure": the package is what failed.
        if name == "Failure":
            return classname, classname, None, "go"
        return f"{classname}.{name}", name, None, "go"
    if suite.tool == "nextest":
        return f"{classname} {name}", name, None, "nextest"
    if suite.tool == "pytest" or (file_attr or "").endswith(".py"):
        return _python_id(classname, name, file_attr, run, suite.tool or "unittest")
    js_file = _js_file(file_attr, suite)
    if js_file is not None or suite.tool in ("jest", "vitest", "mocha"):
        parts = [p for p in (js_file, *_js_suites(classname, name, js_file)) if p]
        return TITLE_SEPARATOR.join([*parts, name]), name, js_file, suite.tool or "jest"
    if classname and _JAVA_CLASS.match(classname) and _JAVA_METHOD.match(name):
        return f"{classname}#{name}", name, file_attr, "junit"
    test_id = f"{classname}{TITLE_SEPARATOR}{name}" if classname else name
    return test_id, name, file_attr, "junit"


def _python_id(
    classname: str, name: str, file_attr: str | None, run: _Run, framework: str
) -> tuple[str, str, str | None, str]:
    """`path/test_x.py::Class::test` when the module's file is known, else `classname::test`.

    The module is the longest dotted prefix of `classname` whose path is the report's
    `file` attribute or appears in the failure's traceback. unittest-xml-reporting gives a
    bare class name and the module's file separately.
    """
    parts = classname.split(".") if classname else []
    seen = {f.path for text in run.traces for f in repo_frames(text, PathMap(), file_attr)}
    for end in range(len(parts), 0, -1):
        module = "/".join(parts[:end]) + ".py"
        if module == file_attr or module in seen:
            rest = "::".join([*parts[end:], name])
            return f"{module}::{rest}", rest, module, framework
    if file_attr and file_attr.endswith(".py") and len(parts) == 1:
        rest = f"{classname}::{name}"
        return f"{file_attr}::{rest}", rest, file_attr, framework
    rest = f"{classname}::{name}" if classname else name
    return rest, name, None, framework


def _js_file(file_attr: str | None, suite: _Suite) -> str | None:
    if file_attr and _JS_FILE.search(file_attr):
        return file_attr
    if _JS_FILE.search(suite.name):
        return _repo_path(suite.name)
    return None


def _js_suites(classname: str, name: str, js_file: str | None) -> list[str]:
    """The describe blocks around a JS test, as `classname` holds them.

    jest-junit's default template repeats the title in both attributes, and vitest puts
    the file in `classname`: neither adds a suite.
    """
    if not classname or classname in (name, js_file):
        return []
    if name.startswith(classname + " "):
        return []
    return [p.strip() for p in classname.split(TITLE_SEPARATOR) if p.strip()]


def _repo_path(printed: str | None) -> str | None:
    if not printed:
        return None
    return PathMap().to_repo(printed.strip())


def _failure(entries: list[tuple[Element, _Suite, _Run]]) -> Failure | None:
    failed = sum(run.failed for _, _, run in entries)
    if failed == 0:
        return None
    case, suite, first = next((e for e in entries if e[2].failed), entries[0])
    test_id, name, file, framework = _identify(case, suite, first)
    frames: list[Frame] = []
    for text in first.traces:
        frames.extend(repo_frames(text, PathMap(), file))
    output_frames = [f for text in first.output for f in repo_frames(text, PathMap(), file)]
    return Failure(
        test_id=test_id,
        name=name,
        file=file,
        framework=framework,
        location=location(frames),
        message=first.message,
        signature=signature(first.message),
        trace_paths=trace_paths(frames + output_frames),
        source=SOURCE,
        attempts_failed=failed,
        attempts_total=sum(run.total for _, _, run in entries),
    )
