"""Benchmark of robustness (issue 24): N mutated inputs across every kind of input -> counts of
tracebacks, hangs and wrongly accepted inputs, and the distinct failure signatures.

The cases are tests/fuzz/cases.py's (mutations of reference-data/ and examples/: platform
files, ASTRA-sim inputs, text workloads, sweep files, LIBRA inputs, result JSON, Chakra bytes,
command-line numbers), seeded, so a run is reproducible. Each runs in a worker process through
the console script's ``main`` with a time bound (SIGALRM; default 30 s: past it, a hang) and
an address-space limit (a runaway allocation is a MemoryError, not a machine out of memory);
a worker that dies is restarted and its case counted as a traceback. Prints one line per
failure signature, the counts, and a JSON line. Not a test; nothing here asserts.

    python bench/fuzz.py [--n 10000] [--bound-s 30] [--jobs 1] [--kinds platform,sweep] [--start 0]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fuzz.cases import KINDS, make_case, run_case  # noqa: E402


def _init(memory_gib: float) -> None:
    limit = int(memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _one(job: tuple[str, int, float]) -> dict:
    kind, seed, bound_s = job
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{kind}-{seed}-"))
    try:
        case = make_case(kind, seed, work)
        out = run_case(case, bound_s=bound_s)
        return {"kind": kind, "seed": seed, "verdict": out.verdict, "code": out.code, "seconds": out.seconds,
                "signature": out.signature, "detail": out.detail, "case": case.describe()}  # fmt: skip
    except BaseException as exc:  # the harness itself failed on this case: counted apart, never lost
        return {"kind": kind, "seed": seed, "verdict": "harness", "code": None, "seconds": 0.0,
                "signature": f"harness {type(exc).__name__}", "detail": str(exc)[:300], "case": f"{kind}#{seed}"}  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="cases, spread over the kinds in turn")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--bound-s", type=float, default=30.0, help="time bound per case (a hang past it)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--memory-gib", type=float, default=6.0, help="address-space limit per worker")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds of input")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    jobs = [(kinds[i % len(kinds)], args.start + i // len(kinds), args.bound_s) for i in range(args.n)]
    counts: collections.Counter[str] = collections.Counter()
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    signatures: dict[str, list[str]] = collections.defaultdict(list)
    start = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.jobs, initializer=_init, initargs=(args.memory_gib,), maxtasksperchild=200) as pool:
        for row in pool.imap_unordered(_one, jobs):
            counts[row["verdict"]] += 1
            by_kind[row["kind"]][row["verdict"]] += 1
            if row["verdict"] != "ok":
                signatures[f"{row['verdict']}: {row['signature']}"].append(f"{row['case']} | {row['detail']}")
    wall = time.perf_counter() - start
    for sig, cases in sorted(signatures.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(cases):5d}  {sig}\n       e.g. {cases[0][:400]}")
    print(f"{args.n} cases ({', '.join(f'{k} {sum(c.values())}' for k, c in by_kind.items())}) in {wall:.0f} s: "
          f"{counts['traceback']} tracebacks, {counts['hang']} hangs ({args.bound_s:.0f} s each), "
          f"{counts['accepted']} wrongly accepted, {len(signatures)} distinct failure signatures"
          + (f" ({counts['harness']} cases the harness failed on)" if counts["harness"] else ""))  # fmt: skip
    print(json.dumps({"bench": "fuzz", "n": args.n, "start": args.start, "bound_s": args.bound_s, "wall_s": wall,
                      "tracebacks": counts["traceback"], "hangs": counts["hang"], "accepted": counts["accepted"],
                      "ok": counts["ok"], "by_kind": {k: dict(c) for k, c in by_kind.items()},
                      "signatures": {k: len(v) for k, v in signatures.items()}}))  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    raise SystemExit(main())
