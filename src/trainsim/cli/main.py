"""`trainsim` console script: registers the command modules on the root app and runs it.

Errors of the :class:`~trainsim.errors.TrainsimError` family become one clear line on stderr
(plus a hint when there is one) and an exit code: 2 bad input, 3 infeasible, 4 deadlock.
Never a traceback for a user's mistake; usage errors are click's own (exit code 2). An
operating-system error on a named file (a disk that fills up, a folder made read-only while a
command runs; the commands check their paths first) is one line and exit code 2 as well.
"""

from __future__ import annotations

import errno
import importlib
import sys
from typing import Any

from trainsim.cli.astra_args import astra_argv
from trainsim.errors import DeadlockError, InfeasibleError, TrainsimError

EXIT_USER_ERROR = 2
EXIT_INFEASIBLE = 3
EXIT_DEADLOCK = 4

COMMAND_MODULES = (
    "trainsim.cli.run_cmd",
    "trainsim.cli.sweep_cmd",
    "trainsim.cli.report_cmd",
    "trainsim.cli.schema_cmd",
    "trainsim.cli.workload_cmd",
    "trainsim.cli.repurpose_cmd",
    "trainsim.cli.generate_cmd",
    "trainsim.cli.optimize_cmd",
    "trainsim.cli.pcm_cmd",
    "trainsim.cli.collective_cmd",
    "trainsim.cli.study_cmd",
    "trainsim.cli.comet_cmd",
    "trainsim.cli.roce_cmd",
)


def _register_commands() -> None:
    """Import the command modules; each adds its commands to the root app."""
    for module in COMMAND_MODULES:
        importlib.import_module(module)


_COMMAND: list[Any] = []
"""The click command typer builds from the app, built once per process: building it takes a
third of a second, which callers of :func:`main` in one process (the tests, the fuzz suite)
would otherwise pay on every call."""


def _command() -> Any:
    if not _COMMAND:
        import typer.main

        from trainsim.cli.app import app

        _COMMAND.append(typer.main.get_command(app))
    return _COMMAND[0]


def _fast_run(args: list[str], *, whole_process: bool) -> int | None:
    """`trainsim run` without typer when ``run_impl.fast_parse`` reads the line (its module
    docstring); its exit code, or None for the typer command to take the line. Interruptions and
    a closed pipe end as under click (exit 130 and 1, nothing printed). ``whole_process`` (the
    console script, not a caller of :func:`main` in its own process): the cyclic garbage
    collector pauses until the inputs are read (``run_impl.pause_gc``)."""
    if args[:1] != ["run"]:
        return None
    from trainsim.cli import run_impl

    kwargs = run_impl.fast_parse(args[1:])
    if kwargs is None:
        return None
    if whole_process:
        run_impl.pause_gc()
    try:
        run_impl.run(**kwargs)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)  # type: ignore[assignment]
        sys.stderr = PacifyFlushWrapper(sys.stderr)  # type: ignore[assignment]
        return 1
    return 0


def _exit_now(code: int) -> None:
    """End the console script's process at once with ``code`` once its output is flushed, when
    nothing is left for the interpreter's shutdown to do but free memory: no ``atexit``
    callback registered (Python's logging registers one) and no other thread. Tearing down
    numpy, pydantic and trainsim's modules costs a fifth of a small run's time."""
    import atexit
    import os

    threading = sys.modules.get("threading")
    if getattr(atexit, "_ncallbacks", lambda: 1)() or (threading is not None and threading.active_count() > 1):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed pipe: the ordinary exit reports it as click would
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code. With ``argv`` None
    (the console script, ``python -m trainsim.cli.main``) a `trainsim run` read by the fast
    parser pauses the garbage collector during start-up and may end the process itself once its
    output is flushed (:func:`_exit_now`); a caller passing ``argv`` gets neither."""
    try:
        args = astra_argv(sys.argv[1:] if argv is None else argv)
        fast = _fast_run(args, whole_process=argv is None)
        if fast is not None:
            if argv is None:
                _exit_now(fast)
            return fast
        _register_commands()  # in the try: a Ctrl-C while importing is an interruption too
        _command()(args=args, prog_name="trainsim")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TrainsimError as exc:
        kind, code = (
            ("deadlock", EXIT_DEADLOCK)
            if isinstance(exc, DeadlockError)
            else ("infeasible", EXIT_INFEASIBLE)
            if isinstance(exc, InfeasibleError)
            else ("error", EXIT_USER_ERROR)
        )
        print(f"trainsim: {kind}: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return code
    except OSError as exc:
        # the commands name their output files (cli/writes.py); an error from elsewhere that
        # carries no file name is still one line
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"trainsim: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("trainsim: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
