"""Failed pytest tests extracted from real and synthetic GitHub Actions job logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.failures import MAX_LOG_CHARS, extract_failures
from bot.triage.models import Failure

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
LOGS = CORPUS / "logs"


def _fixture_log(relative: str) -> str:
    """A corpus log as the runner served it.

    pytorch-test-infra fixtures carry three annotations of their own tool (FIXTURES.md):
    a `#=SOURCE=#` first line, a `#=MATCH=# ` prefix on one line, and guillemets (U+2039,
    U+203A) around spans.
    """
    path = LOGS / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    lines = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("#=SOURCE=#"):
            continue
        lines.append(line.removeprefix("#=MATCH=# ").replace("\u2039", "").replace("\u203a", ""))
    return "\n".join(lines)


def _ids(failures: list[Failure]) -> list[str]:
    return [f.test_id for f in failures]


def _by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


# --- real logs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (
            "pytorch-test-infra/pytest_failure.txt",
            [
                "distributed/test_c10d_spawn_gloo.py::TestDistributedNNFunctionsGloo::test_all_gather"
            ],
        ),
        (
            "pytorch-test-infra/pytest_failures_section.txt",
            ["test_torch.py::TestTorchDeviceTypeCPU::test_cauchy_kstest_cpu_bfloat16"],
        ),
        (
            "pytorch-test-infra/unittest_failed_consistently.txt",
            [
                "dynamo/test_dynamic_shapes.py::DynamicShapesReproTests::"
                "test_vars_traced_correctly_under_compile_dynamic_shapes"
            ],
        ),
        (
            "blastradius/agno-agi__agno__092042274925.excerpt.txt",
            [
                "tests/integration/models/deepinfra/test_structured_response.py::"
                "test_structured_response_with_enum_fields"
            ],
        ),
    ],
)
def test_real_logs_give_exactly_the_failing_tests(log: str, expected: list[str]) -> None:
    assert _ids(extract_failures(_fixture_log(log))) == expected


@pytest.mark.parametrize(
    "log",
    [
        # Infrastructure failures: no test ran to a failure.
        "pytorch-test-infra/gha_timeout.txt",
        "pytorch-test-infra/gha_operation_canceled.txt",
        "pytorch-test-infra/gha_cancellation_shutdown.txt",
        "pytorch-test-infra/infra_osdc_pod_failure.txt",
        # pytorch's run_test.py wrapper names failing files, never a pytest test, in these.
        "pytorch-test-infra/collection_syntaxerror.txt",
        "pytorch-test-infra/python_test_keyboardinterrupt.txt",
        "pytorch-test-infra/test_file_failed_wrapper.txt",
        # A passing job with no tests.
        "blastradius/agno-agi__agno__job97433407085__log.txt",
    ],
)
def test_logs_without_a_failed_pytest_test_give_none(log: str) -> None:
    assert extract_failures(_fixture_log(log)) == []


def test_rerun_rerun_failed_reads_the_failures_section_not_the_reruns() -> None:
    (failure,) = extract_failures(_fixture_log("pytorch-test-infra/pytest_failures_section.txt"))

    assert failure.name == "TestTorchDeviceTypeCPU::test_cauchy_kstest_cpu_bfloat16"
    assert failure.file == "test_torch.py"
    assert failure.framework == "pytest"
    # The only frame inside the repository; everything deeper is in site-packages.
    assert failure.location == "test/test_torch.py:2445"
    assert failure.trace_paths == ["test/test_torch.py"]
    assert failure.message == (
        "torch._dynamo.exc.TorchDynamoException: "
        "Unexpected exception when running generated GraphModule"
    )
    assert failure.signature == failure.message


def test_pytorch_timeout_failure_has_message_and_no_repo_frame() -> None:
    (failure,) = extract_failures(_fixture_log("pytorch-test-infra/pytest_failure.txt"))

    assert failure.message == (
        "RuntimeError: Process 0 terminated or timed out after 310.0115718841553 seconds"
    )
    assert failure.signature == ("RuntimeError: Process 0 terminated or timed out after <duration>")
    assert failure.location is None
    assert failure.trace_paths == []


def test_agno_failure_maps_rootdir_into_the_repository() -> None:
    log = _fixture_log("blastradius/agno-agi__agno__092042274925.excerpt.txt")

    (failure,) = extract_failures(log)

    path = "libs/agno/tests/integration/models/deepinfra/test_structured_response.py"
    assert failure.file == path
    assert failure.location == f"{path}:61"
    assert failure.message == "AttributeError: 'str' object has no attribute 'rating'"
    assert failure.trace_paths == [path]
    # Its `##[error]`-marked traceback line belongs to a test that PASSED.
    assert "test_async_tool_use_stream" not in " ".join(_ids(extract_failures(log)))


# --- synthetic logs, one per feature ----------------------------------------------------------


def _log(*lines: str) -> str:
    return "\n".join(lines) + "\n"


SESSION_START = "============================= test session starts =============================="
RED, BOLD, GREEN, RESET = "\x1b[31m", "\x1b[1m", "\x1b[32m", "\x1b[0m"


def test_timestamps_ansi_and_crlf() -> None:
    stamp = "2026-07-30T10:55:18.2467887Z "
    raw = "\r\n".join(
        stamp + line
        for line in [
            SESSION_START,
            "rootdir: /home/runner/work/shop/shop",
            f"tests/test_cart.py::test_total {GREEN}PASSED{RESET}{GREEN}  [ 50%]{RESET}",
            f"tests/test_cart.py::test_discount {RED}FAILED{RESET}{RED}  [100%]{RESET}",
            f"{RED}=================================== FAILURES ==================================",
            f"{RED}{BOLD}__________________________ test_discount ___________________________",
            "",
            "    def test_discount():",
            ">       assert discount(100) == 90",
            f"{BOLD}{RED}E       assert 80 == 90{RESET}",
            "",
            f"{BOLD}{RED}tests/test_cart.py{RESET}:7: AssertionError",
            "=========================== short test summary info ============================",
            f"{RED}FAILED{RESET} tests/test_cart.py::{BOLD}test_discount{RESET} - assert 80 == 90",
            f"{RED}========================= 1 failed, 1 passed in 0.12s ========================",
        ]
    )

    (failure,) = extract_failures(raw)

    assert failure.test_id == "tests/test_cart.py::test_discount"
    assert failure.name == "test_discount"
    assert failure.file == "tests/test_cart.py"
    assert failure.location == "tests/test_cart.py:7"
    assert failure.message == "assert 80 == 90"


def test_parametrize_ids_with_spaces_and_brackets() -> None:
    log = _log(
        SESSION_START,
        "tests/test_p.py::test_split[a b] FAILED                                   [ 33%]",
        "tests/test_p.py::test_split[x[1]-y] FAILED                                [ 66%]",
        "tests/test_p.py::TestKeys::test_get[key - dash] PASSED                   [100%]",
        "=================================== FAILURES ===================================",
        "_______________________________ test_split[a b] ________________________________",
        "E       AssertionError: spaces",
        "tests/test_p.py:4: AssertionError",
        "_____________________________ test_split[x[1]-y] ______________________________",
        "E       AssertionError: brackets",
        "tests/test_p.py:4: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_p.py::test_split[a b] - AssertionError: spaces",
        "FAILED tests/test_p.py::test_split[x[1]-y] - AssertionError: brackets",
        "========================= 2 failed, 1 passed in 0.05s ==========================",
    )

    failures = _by_id(extract_failures(log))

    assert list(failures) == [
        "tests/test_p.py::test_split[a b]",
        "tests/test_p.py::test_split[x[1]-y]",
    ]
    assert failures["tests/test_p.py::test_split[a b]"].message == "AssertionError: spaces"
    assert failures["tests/test_p.py::test_split[x[1]-y]"].message == "AssertionError: brackets"
    assert failures["tests/test_p.py::test_split[x[1]-y]"].name == "test_split[x[1]-y]"


def test_xdist_progress_lines() -> None:
    log = _log(
        SESSION_START,
        "created: 2/2 workers",
        "2 workers [3 items]",
        "",
        "[gw1] [ 33%] PASSED tests/test_x.py::test_two",
        "[gw0] [ 66%] FAILED tests/test_x.py::TestBus::test_publish[redis]",
        "[gw1] [100%] PASSED tests/test_x.py::test_three",
    )

    (failure,) = extract_failures(log)

    assert failure.test_id == "tests/test_x.py::TestBus::test_publish[redis]"
    assert failure.name == "TestBus::test_publish[redis]"


def test_collection_error_is_a_failure_of_the_file() -> None:
    log = _log(
        SESSION_START,
        "rootdir: /home/runner/work/proj/proj",
        "collecting ... collected 4 items / 1 error",
        "",
        "==================================== ERRORS ====================================",
        "___________________ ERROR collecting tests/test_broken.py ____________________",
        "ImportError while importing test module "
        "'/home/runner/work/proj/proj/tests/test_broken.py'.",
        "Hint: make sure your test modules/packages have valid Python names.",
        "Traceback:",
        "/opt/hostedtoolcache/Python/3.12.3/x64/lib/python3.12/importlib/__init__.py:90: "
        "in import_module",
        "    return _bootstrap._gcd_import(name[level:], package, level)",
        "tests/test_broken.py:3: in <module>",
        "    import nope",
        "E   ModuleNotFoundError: No module named 'nope'",
        "=========================== short test summary info ============================",
        "ERROR tests/test_broken.py",
        "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
        "=============================== 1 error in 0.31s ===============================",
    )

    (failure,) = extract_failures(log)

    assert failure.test_id == "tests/test_broken.py"
    assert failure.file == "tests/test_broken.py"
    assert failure.location == "tests/test_broken.py:3"
    assert failure.message == "ModuleNotFoundError: No module named 'nope'"
    assert failure.trace_paths == ["tests/test_broken.py"]


def test_collection_error_header_alone_is_enough() -> None:
    log = _log(
        "==================================== ERRORS ====================================",
        "_____________________ ERROR collecting tests/test_syntax.py _____________________",
        'E     File "/__w/proj/proj/tests/test_syntax.py", line 2',
        "E       def broken(:",
        "E                  ^",
        "E   SyntaxError: invalid syntax",
    )

    (failure,) = extract_failures(log)

    assert failure.test_id == "tests/test_syntax.py"


def test_rerun_then_pass_is_not_a_failure_and_rerun_then_fail_is() -> None:
    log = _log(
        SESSION_START,
        "tests/test_r.py::test_flaky RERUN                                        [ 50%]",
        "tests/test_r.py::test_flaky PASSED                                       [ 50%]",
        "tests/test_r.py::test_broken RERUN                                       [100%]",
        "tests/test_r.py::test_broken FAILED                                      [100%]",
        "==================================== RERUNS ====================================",
        "__________________________________ test_flaky __________________________________",
        "E       assert False",
        "=================================== FAILURES ===================================",
        "_________________________________ test_broken __________________________________",
        "E       assert 'x' == 'y'",
        "tests/test_r.py:9: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_r.py::test_broken - assert 'x' == 'y'",
        "================== 1 failed, 1 passed, 2 rerun in 0.20s ===================",
    )

    assert _ids(extract_failures(log)) == ["tests/test_r.py::test_broken"]


def test_split_progress_with_live_log_between_id_and_outcome() -> None:
    log = _log(
        SESSION_START,
        "tests/test_live.py::test_noisy ",
        "-------------------------------- live log call ---------------------------------",
        "ERROR    asyncio:base_events.py:1833 Task exception was never retrieved",
        "PASSED                                                                   [ 50%]",
        "tests/test_live.py::test_slow ",
        "-------------------------------- live log call ---------------------------------",
        "WARNING  app:log.py:10 retrying",
        "FAILED                                                                   [100%]",
    )

    assert _ids(extract_failures(log)) == ["tests/test_live.py::test_slow"]


def test_deepest_repo_frame_is_the_location() -> None:
    log = _log(
        SESSION_START,
        "rootdir: /home/runner/work/shop/shop/backend",
        "tests/test_db.py::test_query FAILED                                      [100%]",
        "=================================== FAILURES ===================================",
        "__________________________________ test_query __________________________________",
        "",
        "    def test_query():",
        ">       rows = fetch_orders()",
        "",
        "tests/test_db.py:12: ",
        "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
        "src/shop/db.py:88: in fetch_orders",
        "    return session.execute(q)",
        "/home/runner/work/shop/shop/.venv/lib/python3.12/site-packages/sqlalchemy/orm.py:10: "
        "in execute",
        "    raise OperationalError()",
        "E   sqlalchemy.exc.OperationalError: database is locked",
        "",
        "/usr/lib/python3.12/contextlib.py:155: OperationalError",
        "----------------------------- Captured stdout call -----------------------------",
        '  File "/home/runner/work/shop/shop/backend/src/shop/noise.py", line 1, in <module>',
        "=========================== short test summary info ============================",
        "FAILED tests/test_db.py::test_query - sqlalchemy.exc.OperationalError: database is l...",
    )

    (failure,) = extract_failures(log)

    assert failure.file == "backend/tests/test_db.py"
    assert failure.location == "backend/src/shop/db.py:88"
    assert failure.trace_paths == ["backend/tests/test_db.py", "backend/src/shop/db.py"]
    assert failure.message == "sqlalchemy.exc.OperationalError: database is locked"


def test_native_traceback_frames_in_containers_and_on_windows() -> None:
    log = _log(
        "tests/test_w.py::TestWin::test_path FAILED [100%]",
        "=================================== FAILURES ===================================",
        "______________________________ TestWin.test_path _______________________________",
        "Traceback (most recent call last):",
        '  File "D:\\a\\proj\\proj\\tests\\test_w.py", line 12, in test_path',
        "    check()",
        '  File "/__w/proj/proj/src/pathutil.py", line 40, in check',
        "    raise ValueError(p)",
        "ValueError: C:\\Users\\runneradmin\\AppData\\Local\\Temp\\tmpab12\\x",
    )

    (failure,) = extract_failures(log)

    assert failure.location == "src/pathutil.py:40"
    assert failure.trace_paths == ["tests/test_w.py", "src/pathutil.py"]
    assert failure.signature == "ValueError: <tmp>"


def test_summary_progress_and_section_give_one_failure() -> None:
    log = _log(
        SESSION_START,
        "tests/test_a.py::test_one FAILED                                         [100%]",
        "=================================== FAILURES ===================================",
        "___________________________________ test_one ___________________________________",
        "E       KeyError: 'id'",
        "tests/test_a.py:3: KeyError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_a.py::test_one - KeyError: 'id'",
    )

    (failure,) = extract_failures(log)

    assert failure.location == "tests/test_a.py:3"
    assert failure.message == "KeyError: 'id'"


def test_same_test_name_in_two_files_is_told_apart_by_its_frames() -> None:
    log = _log(
        SESSION_START,
        "tests/api/test_basic.py::test_ok FAILED                                  [ 50%]",
        "tests/cli/test_basic.py::test_ok FAILED                                  [100%]",
        "=================================== FAILURES ===================================",
        "___________________________________ test_ok ____________________________________",
        "E       assert 'cli'",
        "tests/cli/test_basic.py:5: AssertionError",
        "___________________________________ test_ok ____________________________________",
        "E       assert 'api'",
        "tests/api/test_basic.py:5: AssertionError",
    )

    failures = _by_id(extract_failures(log))

    assert failures["tests/api/test_basic.py::test_ok"].message == "assert 'api'"
    assert failures["tests/cli/test_basic.py::test_ok"].message == "assert 'cli'"


def test_error_at_teardown_after_pass_is_a_failure() -> None:
    log = _log(
        SESSION_START,
        "tests/test_t.py::test_cleanup PASSED                                     [100%]",
        "tests/test_t.py::test_cleanup ERROR                                      [100%]",
        "==================================== ERRORS ====================================",
        "_____________________ ERROR at teardown of test_cleanup ______________________",
        "E       PermissionError: [Errno 13] Permission denied: '/tmp/x'",
        "tests/conftest.py:20: PermissionError",
    )

    (failure,) = extract_failures(log)

    assert failure.test_id == "tests/test_t.py::test_cleanup"
    assert failure.location == "tests/conftest.py:20"


def test_a_later_session_that_passes_the_test_clears_it() -> None:
    log = _log(
        SESSION_START,
        "tests/test_s.py::test_once FAILED                                        [100%]",
        "=========================== short test summary info ============================",
        "FAILED tests/test_s.py::test_once - TimeoutError",
        SESSION_START,
        "tests/test_s.py::test_once PASSED                                        [100%]",
    )

    assert extract_failures(log) == []


def test_warnings_summary_node_ids_are_not_outcomes() -> None:
    log = _log(
        SESSION_START,
        "tests/test_w.py::test_warns PASSED                                       [100%]",
        "=============================== warnings summary ===============================",
        "tests/test_w.py::test_warns",
        "  /home/runner/work/p/p/src/w.py:3: DeprecationWarning: old",
        "FAILED",
    )

    assert extract_failures(log) == []


def test_only_the_tail_of_a_huge_log_is_read() -> None:
    head = "FAILED tests/test_head.py::test_lost - only in the head\n"
    padding = ("x" * 4000 + "\n") * (MAX_LOG_CHARS // 4000 + 1)
    tail = _log(
        "=========================== short test summary info ============================",
        "FAILED tests/test_tail.py::test_found - at the end",
    )
    log = (
        "=========================== short test summary info ============================\n"
        + head
        + padding
        + tail
    )

    assert _ids(extract_failures(log)) == ["tests/test_tail.py::test_found"]


_FRAGMENTS = st.sampled_from(
    [
        SESSION_START,
        "=================================== FAILURES ===================================",
        "==================================== ERRORS ====================================",
        "=========================== short test summary info ============================",
        "__________________________________ test_x ___________________________________",
        "_____________________ ERROR collecting tests/test_x.py ______________________",
        "tests/test_x.py::test_x FAILED [ 50%]",
        "tests/test_x.py::test_x[a [b] c] ",
        "FAILED [1.0s] tests/test_x.py::test_x - boom",
        "[gw0] [ 50%] ERROR tests/test_x.py::test_x",
        "RERUN   [ 50%]",
        "E       assert 0",
        'File "/__w/r/r/src/x.py", line 3, in f',
        "tests/test_x.py:3: AssertionError",
        "rootdir: /home/runner/work/r/r/sub",
        "rootdir: C:\\a\\r\\r",
        "##[error]x",
        "\x1b[31m",
        "2026-07-30T10:55:18.2467887Z ",
        "\r",
        "",
    ]
)


@settings(max_examples=200)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=80)), max_size=40))
def test_extract_failures_never_raises_on_arbitrary_text(parts: list[str]) -> None:
    failures = extract_failures("\n".join(parts))

    assert len({f.test_id for f in failures}) == len(failures)
    assert all(f.framework == "pytest" for f in failures)
