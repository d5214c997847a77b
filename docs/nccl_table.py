"""NCCL-tuned collectives, ours vs published nccl-tests measurements (docs/nccl.md).

Each row runs ``trainsim collective`` (``system.collective_bench.collective_sweep``) on one of
the platform files of ``examples/nccl/`` (``system.collective_tuner: nccl``), optionally with
NCCL's ``NCCL_ALGO`` restricted as the measurement was (``system.nccl.algorithms``), and sets
the result beside the published number: busbw (GB/s, nccl-tests' definition) and, where the
source gives it, the time (us). Calibration rows (the one number each hardware's free parameter
was set on) are marked; every other row is a check. Hardware one at a time:

- ``h100``: one 8x H100-SXM node (NVSwitch, NVLS), and 2 to 7 of its GPUs; NVIDIA's statements
  in nccl-tests issues 212 and 290, a user's NVLS / ring sweep over GPU counts (nccl issue 1455);
- ``a100``: one 8x A100-SXM4-80GB node (NVSwitch), NCCL 2.18.1, nccl-tests issue 149 (a user's
  row and NVIDIA's answer);
- ``a3mega``: two GCP a3-megagpu-8g VMs (16x H100, 8x 200 Gb/s GPUDirect-TCPXO per VM), a
  published all_reduce_perf table, 8 B to 8 GiB, NCCL restricted as the TCPXO plugin's profile
  then required (Ring / Tree, Simple); nothing calibrated;
- ``h20``: two 8x H20 nodes (NVSwitch with NVLS, 8x 400 Gb/s NDR per node), NCCL 2.21,
  NVIDIA/nccl issue 1244.

    PYTHONPATH=src python docs/nccl_table.py [--hardware h100,a100,a3mega,h20] [--markdown] [--lists]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypedDict

from trainsim.config.platform import load_platform
from trainsim.config.types import Platform
from trainsim.system.collective_bench import collective_sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "nccl"
GB = 1e9
M = 1 << 20

SOURCES = {
    "t212": "NVIDIA/nccl-tests#212 (S. Jeaugey, NVIDIA, 2024-05-06): 8x H100, ring ~370 GB/s busbw, NVLS peak ~480 (algbw ~275); 256 MB too small for the peak",
    "t290": "NVIDIA/nccl-tests#290 (NVIDIA, 2025-03-03): single 8x H100 node, all_reduce 128M..4G, 476 GB/s 'in the expected range'",
    "t149": "NVIDIA/nccl-tests#149 (2023-06-27): HPE Apollo 6500, 8x A100-SXM4-80GB NVSwitch, NCCL 2.18.1, all_reduce_perf -b 8 -e 1G -f 4: busbw ~200 GB/s at 1 GB; "
    "S. Jeaugey (NVIDIA, 2023-07-05): 12 NVLinks x ~20 GB/s = 240 effective, ~230 GB/s reached at 8 GB, still rising at 512 MB",
    "n1455": "NVIDIA/nccl#1455 (2024-09-19): 8x H100-SXM, all_reduce_perf -b 2G -e 4G on 2..8 GPUs: RING busbw 365-370 for every count; NVLS busbw 420/440/460/480 on 5/6/7/8 GPUs (algbw 258/265/270/273), ~370 on 2-4",
    "a3m": "github.com/lessizzmore/create-a3mega-ztan-fork, ztan-NCCL-test-result (2025-04-02): 2x a3-megagpu-8g (16x H100 80GB HBM3), "
    "NCCL 2.21.5 with Google's TCPXO plugin v1.0.3 and its tuner, all_reduce_perf -b 8 -e 8G -f 2, out-of-place; the plugin's profile in every "
    "release listed before May 2025 (v1.0.5-v1.0.8, GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/README.md) sets "
    "NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple, NCCL_NVLS_ENABLE=0 (LL128 came in v1.0.8, default from May 2025)",
    "n1244": "NVIDIA/nccl#1244 (2024-04-01): 2 nodes x 8 H20, 16 CX7 NDR, NVLS on, NCCL 2.21.5, all_reduce out-of-place",
}


@dataclass(frozen=True)
class Row:
    """One published measurement: ``size`` bytes of ``collective`` on ``hardware``, busbw GB/s
    and time us (None: not given), NCCL algorithms the run allowed (None: NCCL's default)."""

    hardware: str
    collective: str
    size: int
    busbw_gbps: float
    time_us: float | None
    source: str
    calibration: str = ""
    algorithms: tuple[str, ...] | None = None
    gpus: int | None = None  # GPUs of the node used (None: the platform's)


PLATFORMS = {"h100": "dgx_h100_8gpu.yaml", "a100": "dgx_a100_8gpu.yaml", "a3mega": "a3mega_2node.yaml", "h20": "h20_2node.yaml"}

_A3M = [  # size, time us, busbw GB/s (out-of-place columns of the table)
    (8, 135.8, 0.00), (16, 123.2, 0.00), (32, 123.3, 0.00), (64, 123.4, 0.00), (128, 123.0, 0.00),
    (256, 123.6, 0.00), (512, 126.6, 0.01), (1024, 147.1, 0.01), (2048, 125.8, 0.03), (4096, 126.9, 0.06),
    (8192, 131.6, 0.12), (16384, 138.6, 0.22), (32768, 155.2, 0.40), (65536, 159.4, 0.77), (131072, 159.3, 1.54),
    (262144, 167.1, 2.94), (524288, 174.2, 5.64), (1 * M, 203.2, 9.68), (2 * M, 254.0, 15.48), (4 * M, 364.6, 21.57),
    (8 * M, 571.9, 27.50), (16 * M, 977.6, 32.18), (32 * M, 1059.9, 59.36), (64 * M, 1261.6, 99.74),
    (128 * M, 1652.2, 152.32), (256 * M, 2360.9, 213.19), (512 * M, 3817.5, 263.69), (1024 * M, 6759.0, 297.86),
    (2048 * M, 12646.0, 318.40), (4096 * M, 24361.0, 330.58), (8192 * M, 47535.0, 338.82),
]
_H20 = [
    (1 * M, 121.8, 16.14), (2 * M, 129.8, 30.30), (4 * M, 127.6, 61.63), (8 * M, 146.5, 107.38), (16 * M, 203.0, 154.95),
    (32 * M, 298.5, 210.76), (64 * M, 467.9, 268.90), (128 * M, 1108.0, 227.14), (256 * M, 2055.4, 244.88),
    (512 * M, 3218.6, 312.75),
]

ROWS = [
    Row("h100", "all_reduce", 8192 * M, 480.0, None, "t212", calibration="nvls_reduce_gbps 275"),
    Row("h100", "all_reduce", 4096 * M, 476.0, None, "t290"),
    Row("h100", "all_reduce", 8192 * M, 370.0, None, "t212", algorithms=("ring",)),
    Row("h100", "all_gather", 8192 * M, 370.0, None, "t212"),
    Row("h100", "reduce_scatter", 8192 * M, 370.0, None, "t212"),
    *(Row("h100", "all_reduce", 4096 * M, b, None, "n1455", algorithms=("nvls",), gpus=n) for n, b in ((5, 420.0), (6, 440.0), (7, 460.0))),
    *(Row("h100", "all_reduce", 4096 * M, 370.0, None, "n1455", algorithms=("ring",), gpus=n) for n in (2, 4, 8)),
    Row("a100", "all_reduce", 8192 * M, 230.0, None, "t149", calibration="efficiency 0.96"),
    Row("a100", "all_reduce", 1024 * M, 200.0, None, "t149"),
    *(Row("a3mega", "all_reduce", s, b, t, "a3m") for s, t, b in _A3M),
    *(Row("h20", "all_reduce", s, b, t, "n1244") for s, t, b in _H20),
]


def _platform(row: Row, cache: dict[str, Platform]) -> Platform:
    plat = cache.get(row.hardware)
    if plat is None:
        plat = cache[row.hardware] = load_platform(EXAMPLES / PLATFORMS[row.hardware])
    if row.algorithms is not None:
        nccl = replace(plat.system.nccl, algorithms=row.algorithms)
        plat = replace(plat, system=replace(plat.system, nccl=nccl))
    if row.gpus is not None:
        first = replace(plat.network.dims[0], size=row.gpus)
        plat = replace(plat, network=replace(plat.network, dims=(first, *plat.network.dims[1:])))
    return plat


class Compared(TypedDict):
    """One row of :func:`compare`: ours beside theirs (busbw GB/s, time us; ``theirs_us``
    None where the source gives no time)."""

    hardware: str
    collective: str
    size: int
    algorithm: str
    ours_us: float
    theirs_us: float | None
    ours_busbw: float
    theirs_busbw: float
    error: float
    source: str
    calibration: str


def compare(hardware: set[str]) -> list[Compared]:
    """Every row of ``hardware``: ours beside theirs, with the relative error of busbw (time
    where busbw rounds to nothing, below 1 GB/s)."""
    cache: dict[str, Platform] = {}
    out: list[Compared] = []
    for row in ROWS:
        if row.hardware not in hardware:
            continue
        (p,) = collective_sweep(_platform(row, cache), row.collective, [row.size], backend="congestion_unaware")
        ours_busbw, ours_us = p.busbw / GB, p.time_s * 1e6
        if row.busbw_gbps >= 1.0 or row.time_us is None:
            err = ours_busbw / row.busbw_gbps - 1
        else:
            err = ours_us / row.time_us - 1
        out.append({
            "hardware": row.hardware if row.gpus is None else f"{row.hardware}x{row.gpus}", "collective": row.collective, "size": row.size,
            "algorithm": p.algorithm.removeprefix("nccl:") + ("" if row.algorithms is None else " (forced)"),
            "ours_us": ours_us, "theirs_us": row.time_us, "ours_busbw": ours_busbw, "theirs_busbw": row.busbw_gbps,
            "error": err, "source": row.source, "calibration": row.calibration,
        })
    return out


def versus_lists() -> list[tuple[str, int, float, float, str]]:
    """(hardware, size, busbw GB/s without the tuner, with it, NCCL's pick): the same platform
    file with ``collective_tuner`` removed runs the implementation lists' phases (on the H100
    node, ``[inSwitch]``: NVLink SHARP as the generic in-switch reduction)."""
    out = []
    for hardware, sizes in (("a100", [1 * M, 8 * M, 32 * M, 128 * M, 1024 * M]), ("a3mega", [1 * M, 128 * M, 8192 * M])):
        tuned = load_platform(EXAMPLES / PLATFORMS[hardware])
        lists = replace(tuned, system=replace(tuned.system, collective_tuner=None))
        plain = collective_sweep(lists, "all_reduce", sizes, backend="congestion_unaware")
        nccl = collective_sweep(tuned, "all_reduce", sizes, backend="congestion_unaware")
        out += [(hardware, a.size, a.busbw / GB, b.busbw / GB, b.algorithm) for a, b in zip(plain, nccl, strict=True)]
    # NVLink SHARP as the generic in-switch reduction (``inSwitch``) against NCCL's NVLS
    tuned = load_platform(EXAMPLES / PLATFORMS["h100"])
    impl = replace(tuned.system.implementations, all_reduce=("inSwitch",))
    in_switch = replace(tuned, system=replace(tuned.system, collective_tuner=None, implementations=impl))
    sizes = [256 * M, 8192 * M]
    plain = collective_sweep(in_switch, "all_reduce", sizes, backend="congestion_unaware")
    nccl = collective_sweep(tuned, "all_reduce", sizes, backend="congestion_unaware")
    out += [("h100", a.size, a.busbw / GB, b.busbw / GB, b.algorithm) for a, b in zip(plain, nccl, strict=True)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", default=",".join(PLATFORMS))
    ap.add_argument("--markdown", action="store_true", help="print docs/nccl.md's table rows")
    ap.add_argument("--lists", action="store_true", help="all-reduce busbw without the tuner vs with it")
    args = ap.parse_args()
    if args.lists:
        for hardware, size, plain, nccl, pick in versus_lists():
            print(f"{hardware:7} {size:>11}  lists {plain:7.1f} GB/s  nccl {nccl:7.1f} GB/s  {pick}")
        return
    rows = compare(set(args.hardware.split(",")))
    for r in rows:
        theirs_us = "" if r["theirs_us"] is None else f"{r['theirs_us']:.1f}"
        cal = f" calibration: {r['calibration']}" if r["calibration"] else ""
        if args.markdown:
            print(
                f"| {r['hardware']} | {r['collective']} | {r['size']} | {r['algorithm']} | {r['ours_us']:.1f} | {theirs_us} "
                f"| {r['ours_busbw']:.2f} | {r['theirs_busbw']:.2f} | {r['error']:+.1%} | {r['source']}{cal} |"
            )
        else:
            print(
                f"{r['hardware']:7} {r['collective']:15} {r['size']:>11} {r['algorithm']:24} ours {r['ours_us']:10.1f} us "
                f"{r['ours_busbw']:7.2f} GB/s  theirs {theirs_us:>9} us {r['theirs_busbw']:7.2f} GB/s  {r['error']:+7.1%} "
                f"{r['source']}{cal}"
            )
    checks = [abs(r["error"]) for r in rows if not r["calibration"]]
    if checks:
        within = {lim: sum(e <= lim for e in checks) for lim in (0.1, 0.2, 0.3)}
        print(f"# {len(checks)} checked rows: " + ", ".join(f"{n} within {lim:.0%}" for lim, n in within.items()))
    for key, text in SOURCES.items():
        print(f"# {key}: {text}")


if __name__ == "__main__":
    main()
