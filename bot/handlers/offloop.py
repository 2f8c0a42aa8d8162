"""CPU work on what a repository or a pull request supplies, in threads, off the event loop.

The loop answers webhooks, /healthz and the dashboard, and runs every other job: work whose
length a stranger or a repository decides (scanning and parsing a job's log, unzipping
reports, compiling a repository's regexes, parsing a repository's files) runs here. A thread
is enough because no single call in it holds the interpreter for long: Python code hands it
to the loop's thread every few milliseconds, and the calls that do not are bounded: a regex
search or compile of a repository's pattern is RE2's, bounded by a line's length or by
user_regex.MAX_MEM; the scanners of a repository's files are linear in a file the walk caps
at 256 KB, and Python's own parser is not given the shapes it is slow on
(bench/parser_scaling.py: at most about half a second a call, `ast` on 256 KB of slices).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

# Threads of their own, not the loop's default executor: aiohttp resolves host names there,
# and a few long reads must not hold every GitHub request up. More threads than this would
# not read faster, the work being mostly Python's.
_THREADS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="flakybot-read")

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def in_thread(func: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """`asyncio.to_thread` on the readers' threads: the log context (`bind`) goes along."""
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_THREADS, call)
