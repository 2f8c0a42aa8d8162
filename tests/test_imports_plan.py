"""Which files a round of the import walks reads (`plan_reads`): what is wanted, then the
likeliest next files, within the queries the round sends anyway."""

from __future__ import annotations

from bot.shared import Tree, TreeFile
from bot.triage.imports.plan import QueryBounds, batches, plan_reads


def tree(sizes: dict[str, int]) -> Tree:
    return Tree({p: TreeFile(sha=f"{i:040x}", size=s) for i, (p, s) in enumerate(sizes.items())})


FILES = tree(
    {
        "tests/test_orders.py": 10,
        "tests/test_cart.py": 10,
        "src/shop/orders.py": 10,
        "src/shop/rates.py": 10,
        "src/shop/tax/vat.py": 10,
        "src/other/far.py": 10,
        "src/shop/big.py": 1_000,
        "docs/index.md": 10,
        "web/app.ts": 10,
    }
)


def test_the_wanted_files_come_first_then_the_nearest_sources_tests_last() -> None:
    plan = plan_reads(
        ["tests/test_orders.py"], ["src/shop/orders.py"], FILES, set(), file_bytes=500
    )
    assert plan == [
        "src/shop/orders.py",
        "src/shop/rates.py",  # the same folder
        "src/shop/tax/vat.py",  # one folder down
        "src/other/far.py",  # over and down
        "tests/test_cart.py",  # tests: after every other source
        "tests/test_orders.py",
    ]  # not big.py (over the per-file size), docs or another language's files


def test_what_was_read_is_not_read_again_and_nothing_is_read_when_nothing_is_wanted() -> None:
    read = {"src/shop/rates.py", "tests/test_orders.py"}
    plan = plan_reads(["tests/test_orders.py"], ["src/shop/orders.py"], FILES, read)
    assert "src/shop/rates.py" not in plan and "tests/test_orders.py" not in plan
    assert plan_reads(["tests/test_orders.py"], ["src/shop/rates.py"], FILES, read) == []


def test_the_files_fill_the_queries_the_wanted_files_need_and_no_more() -> None:
    wanted = ["src/shop/orders.py", "src/shop/rates.py", "src/shop/tax/vat.py"]
    two = QueryBounds(blobs=2)
    plan = plan_reads(["tests/test_orders.py"], wanted, FILES, set(), two, file_bytes=500)
    assert plan == [*wanted, "src/other/far.py"]  # two queries of two blobs
    assert len(batches(plan, FILES, two)) == 2
    # A round may fill more queries than it needs (bench/walk_calls.py's fill2).
    more = plan_reads(["tests/test_orders.py"], wanted[:1], FILES, set(), QueryBounds(2, 10**6, 2))
    assert len(more) == 4
    # Bytes bound a query too: a file that does not fit is skipped, not the rest.
    by_bytes = QueryBounds(blobs=100, bytes=35)
    assert plan_reads(["tests/test_orders.py"], wanted[:1], FILES, set(), by_bytes) == [
        "src/shop/orders.py",
        "src/shop/rates.py",
        "src/shop/tax/vat.py",
    ]
