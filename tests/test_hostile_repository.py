"""Repository content written to be slow to parse: each scanner reads it in time linear in its
length, and the bot answers /healthz while it reads a hostile tsconfig from a PR head.

No timing is asserted beyond generous timeouts: each hostile file below took a minute or
more to read before its scanner was made linear (bench/parser_scaling.py has the figures).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from bot.demo import final_decisions, running, settle
from bot.sim.scenario import load_scenario
from bot.triage.imports.jsscan import loads_jsonc
from bot.triage.imports.jvm_scan import scan_jvm
from bot.triage.imports.python import imports_of
from bot.triage.imports.values import loads_toml
from bot.triage.imports.walk import WalkLimits

SCENARIOS = Path(__file__).parent / "scenarios"
SIZE = WalkLimits().file_bytes - 16  # the largest file the walk reads


def _fill(unit: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + unit * ((SIZE - len(prefix) - len(suffix)) // len(unit)) + suffix


# (call, the hostile text's unit, prefix, suffix): the call is run on the text in a process of
# its own, so that one that holds the interpreter cannot hold the test runner too.
HOSTILE = {
    "tsconfig of unclosed comments": ("loads_jsonc", "/* ", "", ""),
    "tsconfig of quote-backslash": ("loads_jsonc", '"\\', "", ""),
    "java of quote-backslash": ("scan_jvm", '"\\', "", ""),
    "Cargo.toml of one dotted key": ("loads_toml", "a.", "", "a = 1\n"),
    "python import of one dotted name": ("imports_of", "a.", "import ", "a\n"),
    "vite config of nested aliases": ("key_entries", "alias: {", "", ""),
    "jest config of nested setup files": ("key_strings", "setupFiles: [", "", ""),
    "go.mod of blank lines": ("local_replacements", "\n", "", ""),
    "python test of blank lines": ("routed_python", " \n", "", ""),
}
_CALLS = {
    "loads_jsonc": "bot.triage.imports.jsscan",
    "scan_jvm": "bot.triage.imports.jvm_scan",
    "loads_toml": "bot.triage.imports.values",
    "imports_of": "bot.triage.imports.python",
    "local_replacements": "bot.triage.imports.golang",
    "key_entries": "bot.triage.imports.jsscan",
    "key_strings": "bot.triage.imports.jsscan",
    "routed_python": "bot.triage.imports.routed",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_file_of_the_largest_size_read_is_parsed_in_linear_time(case: str) -> None:
    call, unit, prefix, suffix = HOSTILE[case]
    text = (
        f"{prefix!r} + {unit!r} * (({SIZE} - {len(prefix + suffix)}) // {len(unit)}) + {suffix!r}"
    )
    program = {
        "local_replacements": f"local_replacements({text}, '')",
        "routed_python": f"routed_by('Python', {text})",
        "key_entries": f"key_entries({text}, 'alias')",
        "key_strings": f"key_strings({text}, ['setupFiles'])",
    }.get(call, f"{call}({text})")
    imported = "routed_by" if call == "routed_python" else call
    program = f"from {_CALLS[call]} import {imported}\n{program}\n"
    # Minutes before the scanners were linear; well under a second since.
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)


def test_hostile_files_read_as_unreadable_rather_than_as_a_wrong_answer() -> None:
    assert loads_jsonc(_fill("/* ", "{")) is None
    assert loads_jsonc(_fill('"\\', "{")) is None
    assert loads_toml(_fill("a.", "", "a = 1\n")) is None
    # Too costly for CPython's parser: not read (the walk is partial), not "no imports".
    assert imports_of(_fill("a.", "import ", "a\n")) is None
    assert imports_of(_fill("{a}", "import shop.tax\nx = f'", "'\n")) is None
    found = scan_jvm(_fill('"\\', "package a.b;\nimport a.c.D;\nclass X { String s = "))
    assert (found.package, found.imports) == ("a.b", ["a.c.D"])


def test_what_the_linear_readers_read_is_unchanged() -> None:
    jsonc = '{"a": "x//y /* z */", /* c */ "b": [1, 2,], // d\n "e": "\\"",}'
    assert loads_jsonc(jsonc) == {"a": "x//y /* z */", "b": [1, 2], "e": '"'}
    assert loads_toml('a.b."c.d" = 1\n[x.y]\nz = "a.b"\n') == {
        "a": {"b": {"c.d": 1}},
        "x": {"y": {"z": "a.b"}},
    }
    source = 'package a;\nimport b.C;\nclass D { String s = "x\\"y"; String t = """\nq\n"""; }'
    assert scan_jvm(source).imports == ["b.C"]
    assert [ref.module for ref in imports_of("import a.b.c\nx = f'{y}'\n") or []] == ["a.b.c"]


# Polls /healthz from a process of its own (this one's interpreter may be the one held), at
# least once, until stdin closes; exits 1 at the first answer that takes over the timeout.
_POLLER = """
import sys, threading, time, urllib.request
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
answered = 0
while True:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])).read()
    except OSError as exc:
        print(f"no answer after {answered} answers: {exc}")
        sys.exit(1)
    answered += 1
    if stop.is_set():
        break
    time.sleep(0.02)
print(answered)
"""


async def test_healthz_answers_while_the_bot_reads_a_hostile_tsconfig(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "js-imports-paths-alias.yml")
    [pull] = scenario.pull_requests
    hostile = _fill("/* ", '{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./src/*"]}}')
    head_files = {**pull.head_files, "tsconfig.json": hostile}
    pull = pull.model_copy(update={"head_files": head_files})
    scenario = scenario.model_copy(update={"pull_requests": [pull]})
    async with running(scenario, tmp_path) as (sim, bot):
        poller = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _POLLER, f"{bot.url}/healthz", "10",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        out, _ = await poller.communicate(b"")
        decisions = await final_decisions(bot.store, "acme/shop", [21])

    assert poller.returncode == 0, out.decode()
    assert int(out) > 0
    # The delivery was handled to its end: the failure has a verdict.
    assert len(decisions) == 1
