"""Failed tests from JUnit XML, in the dialects CI tools write.

pytest and unittest-xml-reporting, jest-junit, vitest, mocha-junit-reporter, Maven Surefire
(with its `flakyFailure`/`rerunFailure` retry records, which nextest writes too),
go-junit-report, Bazel's test.xml, and hand-made files. Suites may nest. A test is named in
its framework's own form. A suite's own `<failure>`/`<error>` (its set-up crashed) is a
failed case named after the suite, as Jenkins counts it.

Identity (see docs/architecture.md, "Test identity"): a case is named by its classname and
name; a case without a classname by the names of the suites around it and its name. The
same id under two suite paths is two tests, told apart by their paths; it is one test run
again only when repeated under one suite path, or in Surefire's and nextest's retry records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.locations import attribute_location, choose, stated_path
from bot.triage.reports.messages import error_message
from bot.triage.reports.reported import reported_failure, stated_seconds
from bot.triage.reports.traces import Frame, repo_frames
from bot.triage.reports.xml_safe import counter, local_name

SOURCE = "junit"
# How jest and vitest join a test's file, describe blocks and title (U+203A).
TITLE_SEPARATOR = " \u203a "

_SUITES = frozenset({"testsuites", "testsuite"})
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


@dataclass
class _Suite:
    """What enclosing `<testsuites>`/`<testsuite>` elements say about their test cases."""

    tool: str | None = None
    go: bool = False
    name: str = ""
    file: str = ""
    # The names of the enclosing `<testsuite>` elements, outermost first, but those that
    # name the tool: part of a test's identity when its classname does not make it unique.
    path: tuple[str, ...] = ()


@dataclass
class _Run:
    """One `<testcase>` element's outcome."""

    failed: int
    total: int
    message: str
    traces: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    said: str = ""  # the failures' `message` attributes


@dataclass(slots=True)
class _Failed:
    """The failed runs of one test (one identity under one suite path)."""

    failed: int
    failure: Failure  # read from its first failed run


# The identity of a test: its id and the suite path it ran under.
_Key = tuple[str, tuple[str, ...]]


@dataclass
class JUnitReader:
    """A JUnit document read as its elements end, each `<testcase>` cleared once read, so
    memory holds one case and a few numbers per test, not the tree.

    Passing tests are counted by the hash of their identity (a 64-bit `hash`; two of a
    report's tests sharing one is about as likely as 1 in 10^9 for 200,000 tests): their ids
    are not kept.
    """

    suites: list[_Suite] = field(default_factory=lambda: [_Suite()])
    open: list[tuple[Element, str]] = field(default_factory=list)  # with their tags
    runs: dict[int, int] = field(default_factory=dict)  # identity's hash: its runs
    first_path: dict[int, int] = field(default_factory=dict)  # id's hash: its first path's
    shared: set[int] = field(default_factory=set)  # ids' hashes run under several paths
    failed: dict[_Key, _Failed] = field(default_factory=dict)
    # The failures and errors the root counts, else what each suite under it counts.
    root_counted: int | None = None
    suites_counted: list[int] = field(default_factory=list)
    # `<failure>`/`<error>` elements read: pytest counts a test that failed and then erred
    # in its teardown once in `failures` and once in `errors`.
    failed_elements: int = 0

    def start(self, element: Element) -> None:
        tag = local_name(element)
        self.open.append((element, tag))
        if tag in _SUITES:
            self.suites.append(_enter(element, self.suites[-1]))
            self._declared(element, tag)

    def _declared(self, element: Element, tag: str) -> None:
        counted = counter(element, "failures", "errors")
        if counted is None:
            return
        if len(self.open) == 1:
            self.root_counted = counted
        elif len(self.open) == 2 and self.open[0][1] == "testsuites" and tag == "testsuite":
            self.suites_counted.append(counted)

    def counted(self) -> int | None:
        """The failed cases the report counts itself, None when it does not say."""
        if self.root_counted is not None:
            return self.root_counted
        return sum(self.suites_counted) if self.suites_counted else None

    def end(self, element: Element) -> None:
        _, tag = self.open.pop()
        parent, parent_tag = self.open[-1] if self.open else (None, "")
        if tag == "testcase":
            self._case(element, self.suites[-1])
        elif tag in _SUITES:
            self.suites.pop()
        elif tag == "properties" and parent_tag in _SUITES:
            self.suites[-1].go = self.suites[-1].go or _has_go_version(element)
        elif tag in _FAILED and parent_tag == "testsuite":
            self._suite_failure(element, self.suites[-1])
        elif parent_tag not in _SUITES:
            return  # a test case's own child: read with the case
        element.clear()
        if parent is not None and len(parent) and parent[-1] is element:
            del parent[-1]

    def _case(self, case: Element, suite: _Suite) -> None:
        self.failed_elements += sum(1 for child in case if local_name(child) in _FAILED)
        run = _run(case)
        if run is None:
            return
        test_id, name, file, framework = _identify(case, suite, run)
        key = (test_id, suite.path)
        self._count(key, run.total)
        if run.failed:
            attribute = attribute_location(case.get("file") or suite.file, case.get("line"))
            seconds = stated_seconds(case.get("time"))
            self._fail(
                key,
                run.failed,
                lambda: _failure(test_id, name, file, framework, run, attribute, seconds),
            )

    def _suite_failure(self, element: Element, suite: _Suite) -> None:
        """A suite's own `<failure>`/`<error>` (its set-up crashed): a failed case named
        after the suite, as Jenkins and Surefire count it."""
        self.failed_elements += 1
        name = suite.name or "(unnamed suite)"
        run = _Run(1, 1, _joined([element]), _texts([element]), [], element.get("message") or "")
        key = (name, suite.path[:-1])
        self._count(key, 1)
        attribute = attribute_location(suite.file or None, None)
        self._fail(key, 1, lambda: _failure(name, name, None, "junit", run, attribute))

    def _count(self, key: _Key, runs: int) -> None:
        digest = hash(key)
        self.runs[digest] = self.runs.get(digest, 0) + runs
        test_id, path = hash(key[0]), hash(key[1])
        if self.first_path.setdefault(test_id, path) != path:
            self.shared.add(test_id)

    def _fail(self, key: _Key, failed: int, read: Callable[[], Failure]) -> None:
        known = self.failed.get(key)
        if known is None:
            self.failed[key] = _Failed(failed, read())
        else:
            known.failed += failed

    def result(self) -> tuple[list[Failure], int]:
        """The failed tests, ids made unique by suite path where one id ran in several."""
        failures: list[Failure] = []
        for (test_id, path), tally in self.failed.items():
            update: dict[str, object] = {
                "attempts_failed": tally.failed,
                "attempts_total": self.runs[hash((test_id, path))],
            }
            if hash(test_id) in self.shared and path:
                update["test_id"] = TITLE_SEPARATOR.join([*path, test_id])
            failures.append(tally.failure.model_copy(update=update))
        return failures, len(self.runs)


def _enter(element: Element, outer: _Suite) -> _Suite:
    name = (element.get("name") or "").strip()
    tool = _NAMED_BY_TOOL.get(name.lower())
    is_suite = local_name(element) == "testsuite"
    return _Suite(
        tool=tool or outer.tool,
        go=outer.go,
        name=name if is_suite else outer.name,
        file=element.get("file") or outer.file,
        path=(*outer.path, name) if is_suite and name and tool is None else outer.path,
    )


def _has_go_version(properties: Element) -> bool:
    return any(
        local_name(prop) == "property" and prop.get("name") == "go.version" for prop in properties
    )


def _run(case: Element) -> _Run | None:
    """The case's outcome; None when it was skipped and never ran."""
    failed: list[Element] = []
    flaky: list[Element] = []
    reruns: list[Element] = []
    output: list[str] = []
    skipped = False
    for child in case:
        tag = local_name(child)
        if tag in _FAILED:
            failed.append(child)
        elif tag in _FLAKY:
            flaky.append(child)
        elif tag in _RERUN:
            reruns.append(child)
        elif tag in _OUTPUT:
            output.append(child.text or "")
        elif tag == "skipped":
            skipped = True
    if failed:
        attempts = 1 + len(reruns)
        return _Run(
            attempts, attempts, _joined(failed), _texts(failed + reruns), output, _said(failed)
        )
    if flaky:
        return _Run(len(flaky), len(flaky) + 1, _joined(flaky), _texts(flaky), output, _said(flaky))
    if skipped:
        return None
    return _Run(0, 1, "", [], output)


def _said(elements: list[Element]) -> str:
    return "\n".join(e.get("message") or "" for e in elements)


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
    # Codeception writes only `class`, PHP's `Ns\Class`; PHPUnit writes it beside
    # `classname`, the same class as `Ns.Class`: one test, one id, whichever ran it.
    php_class = (case.get("class") or "").replace("\\", ".")
    classname = (case.get("classname") or php_class).strip()
    name = (case.get("name") or "").strip()
    file_attr = stated_path(case.get("file") or suite.file)
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
    # Without a classname, the suites around the case are what tells it from a namesake.
    # Bazel names its one case after its suite: that adds nothing.
    suites = [p for p in suite.path if p != name] if not classname else []
    suites = suites or _js_suites(classname, name, js_file)
    if js_file is not None or suite.tool in ("jest", "vitest", "mocha"):
        suites = [s for s in suites if s != js_file and stated_path(s) != js_file]
        parts = [p for p in (js_file, *suites) if p]
        return TITLE_SEPARATOR.join([*parts, name]), name, js_file, suite.tool or "jest"
    if classname and _JAVA_CLASS.match(classname) and _JAVA_METHOD.match(name):
        return f"{classname}#{name}", name, file_attr, "junit"
    test_id = TITLE_SEPARATOR.join([*([classname] if classname else suites), name])
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
        return stated_path(suite.name)
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


def _failure(
    test_id: str,
    name: str,
    file: str | None,
    framework: str,
    run: _Run,
    attribute: str | None,
    seconds: float | None = None,
) -> Failure:
    frames: list[Frame] = []
    for text in run.traces:
        frames.extend(repo_frames(text, PathMap(), file))
    output_frames = [f for text in run.output for f in repo_frames(text, PathMap(), file)]
    found = choose(
        stack=frames, attribute=attribute, message=run.said, stack_text="\n".join(run.traces)
    )
    return reported_failure(
        test_id=test_id,
        name=name,
        file=file,
        framework=framework,
        source=SOURCE,
        message=run.message,
        found=found,
        frames=frames + output_frames,
        seconds=seconds,
    )
