"""Per-process CPU accounting for benchmarks/job_overhead.py (active only where TECB_CPU_PROFILE_DIR is set).

Put this folder first on PYTHONPATH: every Python process of a workflow run (snakemake itself and each job's
script) then writes ``$TECB_CPU_PROFILE_DIR/<pid>.json`` at exit with its CPU seconds (user + system, all
threads, ``resource.getrusage``) split into

- ``startup``: the interpreter's start up to this module (site, .pth files),
- ``imports``: inside ``import`` statements (outermost import only, measured with ``time.thread_time``),
- ``compile``: numba compiling a function or loading it from its on-disk cache (outside an import),
- the rest, the job's work.

Nothing is changed in what a process computes; the import wrapper only times the calls.
"""

import os

if os.environ.get("TECB_CPU_PROFILE_DIR"):
    import atexit
    import builtins
    import json
    import resource
    import sys
    import threading
    import time

    def _cpu_self() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    _STARTUP = _cpu_self()
    _TOTALS = {"imports": 0.0, "compile": 0.0, "compile_calls": 0}
    _LOCAL = threading.local()
    _ORIGINAL_IMPORT = builtins.__import__
    _NUMBA_HOOKED = []

    def _enter() -> bool:
        depth = getattr(_LOCAL, "depth", 0)
        _LOCAL.depth = depth + 1
        if depth == 0:
            _LOCAL.start = time.thread_time()
        return depth == 0

    def _leave(outermost: bool, kind: str) -> None:
        _LOCAL.depth -= 1
        if outermost:
            _TOTALS[kind] += time.thread_time() - _LOCAL.start

    def _hook_numba() -> None:
        """Count numba's compilations and cache loads (numba's event API and Cache.load_overload)."""
        _NUMBA_HOOKED.append(True)
        from numba.core import caching
        from numba.core import event as ev

        class _CompileTimer(ev.Listener):
            def on_start(self, event):
                if not hasattr(_LOCAL, "compiles"):
                    _LOCAL.compiles = []
                _LOCAL.compiles.append(_enter())
                _TOTALS["compile_calls"] += 1

            def on_end(self, event):
                _leave(_LOCAL.compiles.pop(), "compile")

        ev.register("numba:compile", _CompileTimer())
        original_load = caching.Cache.load_overload

        def load_overload(self, *args, **kwargs):
            outermost = _enter()
            try:
                return original_load(self, *args, **kwargs)
            finally:
                _leave(outermost, "compile")

        caching.Cache.load_overload = load_overload

    def _timed_import(name, globals=None, locals=None, fromlist=(), level=0):
        outermost = _enter()
        try:
            return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)
        finally:
            _leave(outermost, "imports")
            if outermost and not _NUMBA_HOOKED and "numba.core.event" in sys.modules:
                _hook_numba()

    builtins.__import__ = _timed_import

    def _write() -> None:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        record = {
            "argv0": sys.argv[0] if sys.argv else "",
            "test": os.environ.get("PYTEST_CURRENT_TEST", ""),  # under pytest: the test that started this process
            "pid": os.getpid(),
            "startup": _STARTUP,
            "imports": _TOTALS["imports"],
            "compile": _TOTALS["compile"],
            "compile_calls": _TOTALS["compile_calls"],
            "total": _cpu_self(),
            "children": children.ru_utime + children.ru_stime,
        }
        path = os.path.join(os.environ["TECB_CPU_PROFILE_DIR"], f"{os.getpid()}.json")
        with open(path, "w") as f:
            json.dump(record, f)

    atexit.register(_write)
