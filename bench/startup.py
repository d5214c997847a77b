"""Benchmark: `trainsim run` as a whole process against the floor of any process that reads the
same files (DESIGN.md, "Speed"; issue 18: within 2x of that floor on every input).

For each input, in one run of this script and interleaved (one repetition of every command,
then the next), ``--repeat`` fresh processes of:

- the floor: ``python -c 'import numpy'`` that also reads every input file of the run (its
  bytes: the platform or ASTRA-sim's network / system / memory files and every rank file),
  with one BLAS thread as the console script sets (``trainsim/cli/__init__.py``);
- ``trainsim run`` on those files (the console script's code path, ``python -m
  trainsim.cli.main run ...``, its summary table written to /dev/null).

Times are CPU seconds of the child (user + system, ``RUSAGE_CHILDREN``), the best and the
median of the repeats; ``x floor`` is best over best. Plus ``python -c pass``, ``import numpy``
and ``trainsim --help`` for scale. ``--base OTHER_CHECKOUT/src`` adds ``trainsim run`` from
those sources to the same interleaved run (its ratio to the same floor beside this one's). The children write and read bytecode (``__pycache__`` under a
temporary ``PYTHONPYCACHEPREFIX``, warmed by one untimed run), as an installed package does;
``--no-bytecode`` measures a checkout run with ``PYTHONDONTWRITEBYTECODE`` instead (every
trainsim module compiled at every start). Then one JSON line. Not a test; nothing asserts a
time.

    python bench/startup.py [--repeat N] [--no-bytecode] [--src OTHER_CHECKOUT/src] [--base OTHER_CHECKOUT/src]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ring_allreduce"
REFERENCE = ROOT / "reference-data" / "reference-results" / "inputs"
PY = sys.executable
CLI = [PY, "-m", "trainsim.cli.main"]
# the console script's process setting first (trainsim/cli/__init__.py: one BLAS thread), so the
# floor is the same kind of process
ONE_THREAD = "import os\nos.environ.setdefault('OPENBLAS_NUM_THREADS', '1')\n"
FLOOR = ONE_THREAD + "import numpy, sys\nfor p in sys.argv[1:]:\n    open(p, 'rb').read()"


def rank_files(prefix: Path) -> list[Path]:
    return sorted(prefix.parent.glob(prefix.name + ".*.et"))


def astra_case(workload: str, network: str, system: str) -> tuple[list[str], list[Path]]:
    """ASTRA-sim's own flags and files (bench/astra_reference.py's cases)."""
    prefix = REFERENCE / "workload" / workload
    files = [REFERENCE / "network" / network, REFERENCE / "system" / system, REFERENCE / "remote_memory.json"]
    args = [
        f"--workload-configuration={prefix}",
        f"--system-configuration={files[1]}",
        f"--network-configuration={files[0]}",
        f"--remote-memory-configuration={files[2]}",
    ]
    return args, files + rank_files(prefix)


def inputs(tmp: Path, env: dict[str, str]) -> dict[str, tuple[list[str], list[Path]]]:
    """name -> (the arguments of ``trainsim run``, the files it reads)."""
    platform = EXAMPLE / "platform.yaml"
    example = EXAMPLE / "workload" / "ring"
    generated = tmp / "gen" / "w"
    subprocess.run(
        [*CLI, "generate", "resnet50", "--dp", "8", "--out", str(generated)],
        check=True, env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    groups = generated.parent / "w.comm_groups.json"
    dgx = tmp / "dgx.yaml"  # the DGX A100 platform of examples/, one node of 8 GPUs
    text = (ROOT / "examples" / "dgx_a100" / "platform.yaml").read_text()
    dgx.write_text("\n".join(line for line in text.splitlines() if "size: 128" not in line).replace("[ring, ring]", "[ring]"))
    return {
        "ring_allreduce example (platform YAML)": (
            [str(platform), "--workload", str(example)], [platform, *rank_files(example)]
        ),
        "ASTRA-sim files: all-reduce 32 NPUs 2-D": astra_case(
            "all_reduce/32npus_1MiB/et", "2d_ring8_sw4.yml", "2d_ring.json"
        ),
        "ASTRA-sim files: DP 64 layers, Ring 8": astra_case(
            "dp/8npus_64layers_64MiB/et", "ring8.yml", "1d_ring.json"
        ),
        "generated resnet50 DP 8 (Chakra files)": (
            [str(platform), "--workload", str(generated), "--comm-group-configuration", str(groups)],
            [platform, groups, *rank_files(generated)],
        ),
        "DGX A100 platform YAML, generated": (
            [str(dgx), "--workload", str(generated), "--comm-group-configuration", str(groups)],
            [dgx, groups, *rank_files(generated)],
        ),
    }


def child_env(src: Path, pycache: Path, *, no_bytecode: bool) -> dict[str, str]:
    """The children's environment: ``src`` first on the path, bytecode as asked."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src.resolve()) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def cpu_s(command: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--no-bytecode", action="store_true", help="children run with PYTHONDONTWRITEBYTECODE=1")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the trainsim sources to run (another checkout's, to compare)")
    parser.add_argument("--base", type=Path, help="also run these trainsim sources, interleaved (e.g. main's checkout's src)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = child_env(args.src, tmp / "pycache", no_bytecode=args.no_bytecode)
        base_env = child_env(args.base, tmp / "pycache-base", no_bytecode=args.no_bytecode) if args.base else None
        commands = {
            "python -c pass": [PY, "-c", "pass"],
            "python -c 'import numpy'": [PY, "-c", "import numpy"],
            "python -c 'import numpy', one BLAS thread": [PY, "-c", ONE_THREAD + "import numpy"],
            "trainsim --help": [*CLI, "--help"],
        }
        pairs = {}
        for name, (run_args, files) in inputs(tmp, env).items():
            floor, run = f"floor: {name}", f"run:   {name}"
            commands[floor] = [PY, "-c", FLOOR, *map(str, files)]
            commands[run] = [*CLI, "run", *run_args]
            pairs[name] = (floor, run, len(files))
            if base_env is not None:
                commands[f"base:  {name}"] = [*CLI, "run", *run_args]
        envs = {name: base_env if name.startswith("base:") and base_env else env for name in commands}
        for name, command in commands.items():  # untimed: writes the bytecode, warms the file cache
            cpu_s(command, envs[name])
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                times[name].append(cpu_s(command, envs[name]))
    rows = {name: {"best_s": min(t), "median_s": statistics.median(t)} for name, t in times.items()}
    load = os.getloadavg()
    print(f"CPU s of each child, best / median of {args.repeat}; bytecode {'off' if args.no_bytecode else 'cached'}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'command':50s} {'best s':>7s} {'median s':>9s}")
    for name, row in rows.items():
        if not name.startswith(("floor:", "run:", "base:")):
            print(f"{name:50s} {row['best_s']:7.3f} {row['median_s']:9.3f}")
    base_head = f" {'base s':>7s} {'base x':>7s}" if args.base else ""
    print(f"\n{'input (files)':50s} {'floor s':>8s} {'run s':>7s} {'x floor':>8s}{base_head}")
    ratios, base_ratios = {}, {}
    for name, (floor, run, nfiles) in pairs.items():
        ratios[name] = rows[run]["best_s"] / rows[floor]["best_s"]
        line = f"{f'{name} ({nfiles})':50s} {rows[floor]['best_s']:8.3f} {rows[run]['best_s']:7.3f} {ratios[name]:8.2f}"
        if args.base:
            base = rows[f"base:  {name}"]["best_s"]
            base_ratios[name] = base / rows[floor]["best_s"]
            line += f" {base:7.3f} {base_ratios[name]:7.2f}"
        print(line)
    print(json.dumps({"bench": "startup", "repeat": args.repeat, "bytecode": not args.no_bytecode, "loadavg": load, "commands": rows, "x_floor": ratios, **({"base_x_floor": base_ratios} if args.base else {})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
