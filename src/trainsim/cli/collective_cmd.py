"""`trainsim collective`: one collective over a range of sizes, printed as nccl-tests prints it
(size, time, algbw, busbw), so that a user can set the model beside a measurement
(``system/collective_bench.py`` has the columns' definitions).

Sizes as nccl-tests' ``-b``/``-e``/``-f`` take them: ``32M..8G`` doubles from 32 MiB to 8 GiB
(``--factor`` changes the step), ``1M,4M,1G`` lists them. ``K``, ``M``, ``G``, ``T`` and
``KiB`` ... ``TiB`` are powers of 1024 (nccl-tests' own reading); ``kB``, ``MB``, ``GB``, ``TB``
powers of 1000; a bare number is bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_file
from trainsim.errors import ConfigError
from trainsim.system.modes import COMPAT_MODES, backend_names

MAX_SIZES = 64
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(i?B?)\s*$", re.IGNORECASE)
_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


def parse_size(text: str) -> int:
    """``"32M"`` -> 33554432 (module docstring for the suffixes); a ConfigError otherwise."""
    m = _SIZE.match(text)
    if m is None:
        raise ConfigError(f"size {text!r}; expected bytes with an optional suffix such as 32M, 1GiB or 500MB", field="--sizes")
    number, prefix, tail = m.group(1), m.group(2).upper(), m.group(3)
    decimal = tail.upper() == "B" and prefix != ""
    value = float(number) * (1000 if decimal else 1024) ** _POWER[prefix]
    if value < 1 or value != int(value):
        raise ConfigError(f"size {text!r} is not a whole number of bytes >= 1", field="--sizes")
    return int(value)


def parse_sizes(text: str, factor: float) -> list[int]:
    """``"A..B"`` (A, A x factor, ... up to B) or ``"A,B,C"``; at most ``MAX_SIZES`` sizes."""
    if ".." in text:
        first, _, last = text.partition("..")
        lo, hi = parse_size(first), parse_size(last)
        if hi < lo:
            raise ConfigError(f"{text!r} ends below where it starts; expected MIN..MAX", field="--sizes")
        if factor <= 1:
            raise ConfigError(f"factor {factor} does not grow the size; expected > 1", field="--factor")
        sizes = [lo]
        while sizes[-1] * factor <= hi and len(sizes) <= MAX_SIZES:
            sizes.append(int(sizes[-1] * factor))
    else:
        sizes = [parse_size(s) for s in text.split(",") if s.strip()]
    if not sizes or len(sizes) > MAX_SIZES:
        raise ConfigError(f"{text!r} gives {len(sizes)} sizes; expected 1 to {MAX_SIZES}", field="--sizes")
    return sizes


@app.command("collective")
def collective_command(
    collective: str = typer.Argument(..., help="all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or reduce."),
    platform: Path = typer.Option(..., "--platform", help="Native platform YAML: the collective runs on all of its ranks."),
    sizes: str = typer.Option("32M..8G", "--sizes", help="MIN..MAX (x --factor each step) or a comma list; K/M/G = 1024-based as in nccl-tests."),
    factor: float = typer.Option(2.0, "--factor", help="Step between sizes of a MIN..MAX range (nccl-tests' -f)."),
    backend: str = typer.Option("congestion_unaware", "--backend", help=f"Network backend: {', '.join(backend_names())}."),
    compat: str | None = typer.Option(None, "--compat", help=f"Arithmetic conventions: {', '.join(COMPAT_MODES)} (default: the platform file's)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the rows as JSON to this path ('-' for stdout)."),
) -> None:
    """One collective over a range of sizes: an nccl-tests-style table (size, time, algbw, busbw)."""
    from trainsim.config.platform import load_platform
    from trainsim.report.document import dumps
    from trainsim.system.collective_bench import collective_sweep

    byte_sizes = parse_sizes(sizes, factor)
    check_output_file(json_path, "--json")
    plat = load_platform(platform)
    from trainsim.cli.run_cmd import ProgressDisplay

    # a bar (simulated time, elapsed) on a terminal once a size takes over a second: a large
    # machine's rank-by-rank backends can take minutes
    with ProgressDisplay(enabled=str(json_path) != "-") as display:
        points = collective_sweep(plat, collective, byte_sizes, backend=backend, compat=compat, progress=display.update)
    rows = [
        {"size_bytes": p.size, "time_s": p.time_s, "algbw_gbps": p.algbw / 1e9, "busbw_gbps": p.busbw / 1e9, "algorithm": p.algorithm}
        for p in points
    ]
    if json_path is not None:
        text = dumps({"collective": collective, "ranks": plat.network.npus, "backend": backend, "rows": rows})
        if str(json_path) == "-":
            typer.echo(text)
            return
        json_path.write_text(text + "\n")
    from rich.table import Table

    from trainsim.cli.console import stdout_console

    table = Table(title=f"{collective} on {plat.network.npus} ranks ({platform.name}, {backend})")
    for name in ("size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)"):
        table.add_column(name, justify="right")
    tuned = any(p.algorithm.startswith("nccl:") for p in points)
    if tuned:  # NCCL's pick per size (docs/nccl.md)
        table.add_column("algorithm/protocol")
    for p in points:
        cells = [str(p.size), f"{p.time_s * 1e6:.2f}", f"{p.algbw / 1e9:.2f}", f"{p.busbw / 1e9:.2f}"]
        table.add_row(*cells, *([p.algorithm.removeprefix("nccl:")] if tuned else []))
    stdout_console().print(table)
