"""`trainsim` console script: one typer app; each command group lives in its own module.

Errors of the :class:`~trainsim.errors.TrainsimError` family become exit code 2 and one clear
line on stderr (plus a hint when there is one); never a traceback for a user's mistake.
"""

from __future__ import annotations

import sys

import typer

from trainsim import __version__
from trainsim.errors import DeadlockError, InfeasibleError, TrainsimError

app = typer.Typer(
    name="trainsim",
    help="Simulate and optimize distributed deep-learning training platforms.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_USER_ERROR = 2
EXIT_INFEASIBLE = 3
EXIT_DEADLOCK = 4


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trainsim {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Simulate and optimize distributed deep-learning training platforms."""


def _register_commands() -> None:
    """Import the command modules; each adds its commands to ``app``."""
    import importlib

    for module in ("trainsim.cli.commands", "trainsim.cli.pcm_cmd"):
        importlib.import_module(module)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    _register_commands()
    try:
        app(args=argv, standalone_mode=False)
    except DeadlockError as exc:
        print(f"trainsim: deadlock: {exc}", file=sys.stderr)
        return EXIT_DEADLOCK
    except InfeasibleError as exc:
        print(f"trainsim: infeasible: {exc}", file=sys.stderr)
        return EXIT_INFEASIBLE
    except TrainsimError as exc:
        print(f"trainsim: error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return EXIT_USER_ERROR
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        print("trainsim: aborted", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors arrive as ClickException
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return EXIT_USER_ERROR
        raise
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
