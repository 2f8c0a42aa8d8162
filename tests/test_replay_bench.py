"""The replay bench's own parts (bench/replay.py), without the mirrors: the manifest, the
walk loop and its call count, one pair's triage, the scoring."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bench.replay import MANIFEST, Pair, Triage, blank, drive, load_manifest, score, triage
from bench.replays import label_csharp, labels
from bot.shared import Source, Tree, TreeFile
from bot.triage.imports import ImportWalk, WalkLimits
from bot.triage.models import Verdict

FILES: dict[str, Source] = {
    "tests/test_tax.py": "from billing import tax\n",
    "billing/__init__.py": "",
    "billing/tax.py": "from billing import rates\n",
    "billing/rates.py": "RATE = 2\n",
    "billing/mail.py": "X = 1\n",
}


def tree_of(files: Mapping[str, Source]) -> Tree:
    return Tree({p: TreeFile(f"{i:040x}", len(str(s))) for i, (p, s) in enumerate(files.items())})


def reader(
    files: Mapping[str, Source], reads: list[list[str]]
) -> Callable[[list[str]], Mapping[str, Source]]:
    def read(paths: list[str]) -> dict[str, Source]:
        reads.append(sorted(paths))
        return {path: files[path] for path in paths}

    return read


def test_the_committed_manifest_loads_with_both_truths_in_each_language() -> None:
    checkouts = load_manifest(json.loads(MANIFEST.read_text()))
    truths: dict[str, set[str]] = {}
    for checkout in checkouts:
        assert len(checkout.commit) == 40
        for pair in checkout.pairs:
            truths.setdefault(checkout.language, set()).add(pair.truth)
    assert all(found == {"related", "unrelated"} for found in truths.values())


def test_a_pair_whose_truth_is_neither_is_refused() -> None:
    entry = {"repository": "a/b", "mirror": "a+b", "commit": "0" * 40, "language": "python"}
    pairs = [{"test": "t.py", "changed": ["x.py"], "truth": "maybe"}]
    with pytest.raises(ValueError, match="maybe"):
        load_manifest({"repositories": [{**entry, "pairs": pairs}]})


def test_the_loop_reads_what_is_wanted_round_by_round_and_counts_the_calls() -> None:
    reads: list[list[str]] = []
    found, calls = drive("tests/test_tax.py", tree_of(FILES), reader(FILES, reads), WalkLimits())
    assert {r.path for r in found.reached} >= {"billing/tax.py", "billing/rates.py"}
    assert not found.wanted
    assert "tests/test_tax.py" in reads[0]  # with the files likeliest to be wanted next
    assert calls == 1 + len(reads)  # the tree, then one query a round


def test_more_files_than_one_query_holds_cost_a_query_more() -> None:
    modules = {f"pkg/m{i}.py": "" for i in range(150)}
    test = "import " + ", ".join(f"pkg.m{i}" for i in range(150)) + "\n"
    files: dict[str, Source] = {"tests/test_many.py": test, "pkg/__init__.py": "", **modules}
    limits = WalkLimits(files=1000)
    _, calls = drive("tests/test_many.py", tree_of(files), reader(files, []), limits)
    # The tree, then the test file with the first 99 modules (the planner fills the query),
    # then the other 52 files in a query of their own.
    assert calls == 1 + 1 + 1


def test_a_cut_walk_is_unknown_with_its_reason_blanked() -> None:
    tree = tree_of(FILES)
    limits = WalkLimits(files=2)

    def walked(test: str) -> tuple[ImportWalk, int]:
        return drive(test, tree, reader(FILES, []), limits)

    found = triage(
        Pair("tests/test_tax.py", ("billing/mail.py",), "unrelated"), "python", tree, walked
    )
    assert found.verdict is Verdict.UNKNOWN
    assert found.reasons == ("the budget of N files read was spent",)


@pytest.mark.parametrize(
    ("changed", "truth", "verdict"),
    [
        ("billing/rates.py", "related", Verdict.RELATED),
        ("billing/mail.py", "unrelated", Verdict.FLAKY),
    ],
)
def test_a_complete_walk_decides_with_a_passing_rerun(
    changed: str, truth: str, verdict: Verdict
) -> None:
    tree = tree_of(FILES)
    found = triage(
        Pair("tests/test_tax.py", (changed,), truth),
        "python",
        tree,
        lambda test: drive(test, tree, reader(FILES, []), WalkLimits()),
    )
    assert found.verdict is verdict


def test_precision_recall_and_the_false_clearances_are_scored() -> None:
    def one(truth: str, verdict: Verdict) -> Triage:
        return Triage(
            Pair("t.py", ("x.py",), truth),
            verdict,
            None,
            0,
            ("cut",) * (verdict is Verdict.UNKNOWN),
        )

    figures = score(
        [
            one("unrelated", Verdict.FLAKY),
            one("unrelated", Verdict.UNKNOWN),
            one("related", Verdict.FLAKY),
            one("related", Verdict.RELATED),
        ]
    )
    assert (figures["precision"], figures["recall"], figures["unknown_share"]) == (0.5, 0.5, 0.25)
    assert figures["unknown_reasons"] == {"cut": 1}
    assert [f["changed"] for f in figures["false_cleared"]] == [["x.py"]]


def test_blanking_keeps_the_words_of_a_reason() -> None:
    text = "src/a/b.py not read (larger than 256,000 bytes)"
    assert blank(text) == "<file> not read (larger than N bytes)"
    assert Path(MANIFEST).name == "manifest.json"


def test_pairs_are_drawn_on_both_sides_of_the_closure_and_from_real_commits() -> None:
    closure = {"t.py", "a.py", "b.py"}
    past = [
        ("c1", ["t.py", "z.py"]),  # changes the test itself: not a pair
        ("c2", ["README.md", "b.py"]),
        ("c3", ["z.py"]),
        ("c4", ["a.py"]),
    ]
    chosen = labels.pairs({"t.py": closure}, ["a.py", "b.py", "y.py", "z.py"], 1, past, 1)
    single = [(p["changed"], p["truth"]) for p in chosen if "from" not in p]
    assert sorted(truth for _, truth in single) == ["related", "unrelated"]
    assert all((changed[0] in closure) == (truth == "related") for changed, truth in single)
    real = [(p["from"], p["truth"]) for p in chosen if "from" in p]
    assert real == [("c2", "related"), ("c3", "unrelated")]


@pytest.mark.skipif(shutil.which("mcs") is None, reason="Mono's mcs is not installed")
def test_the_csharp_label_follows_errors_round_by_round(tmp_path: Path) -> None:
    """mcs stops before binding method bodies when a declaration fails: without A.cs it
    reports B.cs (a field of type A) alone, not C.cs (a call in a body), so the label
    leaves files out round by round. T.cs needs D, D needs C, C needs A; nothing needs B.
    Tuple.cs uses C# mcs cannot parse (a cast to a tuple type): left out first."""
    sources = {
        "A.cs": "public class A { public static int X() { return 1; } }\n",
        "B.cs": "public class B { public A Field; }\n",
        "C.cs": "public class C { public int M() { return A.X(); } }\n",
        "D.cs": "public class D { public int M() { return new C().M(); } }\n",
        "Tuple.cs": "class U { object F() { return (System.Func<(int A, int B)>) null; } }\n",
        "T.cs": "public class T { [NUnit.Framework.Test] public void M() { new D().M(); } }\n",
    }
    for name, text in sources.items():
        (tmp_path / "src" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    compiler = label_csharp.Compiler(tmp_path, [], [])
    found, left_out = label_csharp.closures(tmp_path, ["src/T.cs"], ["src"], compiler)
    assert found == {"src/T.cs": {"src/T.cs", "src/D.cs", "src/C.cs", "src/A.cs"}}
    assert left_out == ["src/Tuple.cs"]
    assert compiler.errors(["src/B.cs", "src/C.cs"]) == {"src/B.cs"}  # C.cs's error unreported
