"""Mutated inputs for the fuzz suite (tests/fuzz/test_fuzz.py) and bench/fuzz.py (issue 24).

Each case starts from a real input the repository holds (reference-data/, examples/: native
platform files, ASTRA-sim network YAML and system JSON, text workloads, sweep files, LIBRA's
inputs, a result JSON, Chakra ET bytes, command-line numbers), applies one or two mutations
chosen by a seeded ``random.Random`` (the same seed gives the same case), writes the files into
a folder and gives the ``trainsim`` argument list that reads them. The oracle
(:func:`run_case`): the command returns 0, 2, 3 or 4 (exit codes of ``cli/main.py``), never
raises (a traceback), never runs past the time bound (a hang); and a case whose mutation
makes the input certainly wrong (``must_refuse``: an unknown key in a strict file, a negative
or non-finite bandwidth, a size below 2, a Chakra message cut short, a result without its
makespan) does not return 0 (wrongly accepted).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "reference-data"
INPUTS = DATA / "reference-results" / "inputs"
TEXT = DATA / "reference-workloads" / "astra-sim-1.0-text"
LIBRA = DATA / "reference-workloads" / "libra"
EXAMPLES = ROOT / "examples"
RING_EXAMPLE = EXAMPLES / "ring_allreduce"
ET_8 = INPUTS / "workload" / "all_reduce" / "8npus_1MiB" / "et"

INTERESTING: tuple[Any, ...] = (
    0, 1, -1, 2, 3, 7, 2**31, 2**63, 2**64 + 1, 10**9, 10**12, -(10**9), 0.5, 1e-300, 1e300,
    float("inf"), float("-inf"), float("nan"), "", "x", "ring", None, True, False, [], {}, [1, 2], "1e9",
)  # fmt: skip
"""Values a mutation puts where a number or a name was."""
TEXT_NUMBERS = ("0", "-1", "1", "99999999999999999999", "1e309", "nan", "-0", "4294967296", "1000000", "1.5", "x")
EXIT_OK = {0, 2, 3, 4}
"""0 success, 2 bad input, 3 infeasible, 4 deadlock: every answer of cli/main.py but a traceback."""


@dataclass
class Case:
    kind: str
    seed: int
    argv: list[str]
    mutations: list[str] = field(default_factory=list)
    must_refuse: bool = False
    """True when a mutation certainly makes the input wrong: exit code 0 is then wrongly accepted."""

    def describe(self) -> str:
        return f"{self.kind}#{self.seed}: {'; '.join(self.mutations)}"


@dataclass
class Outcome:
    case: Case
    verdict: str  # "ok", "traceback", "hang", "accepted"
    code: int | None
    seconds: float
    signature: str = ""
    detail: str = ""


# -- structural mutations of YAML / JSON data ------------------------------------------------


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def mutate_data(data: Any, rng: random.Random) -> tuple[Any, str]:
    """One structural mutation of a parsed document: a value replaced, a key removed or
    added, a list item duplicated or dropped, a container turned into a scalar."""
    paths = [p for p in _paths(data) if p]
    if not paths:
        return data, "unchanged"
    path = rng.choice(paths)
    parent, last = _get(data, path[:-1]), path[-1]
    op = rng.random()
    where = ".".join(str(p) for p in path)
    if op < 0.55:
        value = copy.deepcopy(rng.choice(INTERESTING))  # a copy: a later mutation may change it
        parent[last] = value
        return data, f"{where} = {value!r}"
    if op < 0.7 and isinstance(parent, dict):
        del parent[last]
        return data, f"del {where}"
    if op < 0.8 and isinstance(parent, list):
        parent.insert(last, parent[last])
        return data, f"dup {where}"
    if op < 0.9 and isinstance(parent, list) and len(parent) > 1:
        del parent[last]
        return data, f"drop {where}"
    value = _get(data, path)
    scaled = value * rng.choice((10, 1000, 10**6, -1)) if isinstance(value, int | float) and not isinstance(value, bool) else 10**6
    parent[last] = scaled
    return data, f"{where} = {scaled!r} (scaled)"


def mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    """One textual mutation: a number replaced, a line deleted or repeated, bytes inserted,
    the text cut short."""
    op = rng.random()
    numbers = list(re.finditer(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text))
    if op < 0.45 and numbers:
        m = rng.choice(numbers)
        new = rng.choice(TEXT_NUMBERS)
        return text[: m.start()] + new + text[m.end() :], f"number {m.group()!r} at {m.start()} -> {new!r}"
    lines = text.splitlines(keepends=True)
    if op < 0.6 and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[:i] + lines[i + 1 :]), f"line {i + 1} deleted"
    if op < 0.75 and lines:
        i = rng.randrange(len(lines))
        times = rng.choice((2, 10, 1000))
        return "".join(lines[: i + 1] + [lines[i]] * times + lines[i + 1 :]), f"line {i + 1} x{times}"
    if op < 0.9:
        at = rng.randrange(len(text) + 1)
        junk = rng.choice(("\x00", "\ufffd", ":", "- ", "{", "]", "&a", "*a", "\t", "'", "\\", "#"))
        return text[:at] + junk + text[at:], f"{junk!r} inserted at {at}"
    at = rng.randrange(len(text) + 1)
    return text[:at], f"cut at {at} of {len(text)}"


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One byte-level mutation of a binary file."""
    out = bytearray(data)
    op = rng.random()
    if op < 0.4 and out:
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
        return bytes(out), f"bit flip at byte {i}"
    if op < 0.6 and out:
        i = rng.randrange(len(out))
        out[i] = rng.choice((0x00, 0x7F, 0x80, 0xFF))
        return bytes(out), f"byte {i} = {out[i]:#x}"
    if op < 0.75:
        i = rng.randrange(len(out) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 16))))
        return bytes(out[:i] + junk + out[i:]), f"{len(junk)} bytes inserted at {i}"
    if op < 0.9 and out:
        i = rng.randrange(len(out))
        return bytes(out[:i] + out[i + rng.randrange(1, 32) :]), f"bytes deleted at {i}"
    i = rng.randrange(len(out) + 1)
    return bytes(out[:i]), f"cut at {i} of {len(out)}"


def _dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None)


def _yaml_case(text: str, rng: random.Random, mutations: list[str]) -> str:
    """Mutate YAML text: structurally (parsed, one to three mutations, dumped) or as text."""
    if rng.random() < 0.7:
        data = yaml.safe_load(text)
        for _ in range(rng.choice((1, 1, 2, 3))):
            data, what = mutate_data(data, rng)
            mutations.append(what)
        return _dump_yaml(data)
    text, what = mutate_text(text, rng)
    mutations.append(what)
    return text


# -- the kinds of cases ----------------------------------------------------------------------


def _platform(rng: random.Random, work: Path, case: Case) -> None:
    """A native platform file (examples/) run on the ring example's workload."""
    source = rng.choice([RING_EXAMPLE / "platform.yaml", EXAMPLES / "dgx_a100" / "platform.yaml", EXAMPLES / "mesh_contention" / "platform.yaml"])
    data = yaml.safe_load(source.read_text())
    if rng.random() < 0.15:  # certainly wrong
        choice = rng.randrange(3)
        if choice == 0:
            target = data if rng.random() < 0.5 else data.setdefault("system", {})
            target["unknown_key_" + str(rng.randrange(100))] = 1
            case.mutations.append("unknown key added")
        elif choice == 1:
            value = rng.choice((-1.0, 0.0, float("nan"), float("inf")))
            data["network"]["dims"][0]["bandwidth_gbps"] = value
            case.mutations.append(f"network.dims[0].bandwidth_gbps = {value}")
        else:
            value = rng.choice((0, 1, -4))
            data["network"]["dims"][0]["size"] = value
            case.mutations.append(f"network.dims[0].size = {value}")
        case.must_refuse = True
        text = _dump_yaml(data)
    else:
        text = _yaml_case(source.read_text(), rng, case.mutations)
    (work / "platform.yaml").write_text(text)
    case.argv = ["run", str(work / "platform.yaml"), "--workload", str(RING_EXAMPLE / "workload" / "ring"), "-q",
                 "--json", str(work / "r.json")]  # fmt: skip


def _astra(rng: random.Random, work: Path, case: Case) -> None:
    """ASTRA-sim's network YAML and system JSON, run on an 8-rank all-reduce."""
    network = (INPUTS / "network" / "ring8.yml").read_text()
    system_path = rng.choice(sorted((INPUTS / "system").glob("1d_*.json")))
    system = system_path.read_text()
    if rng.random() < 0.5:
        network = _yaml_case(network, rng, case.mutations)
    elif rng.random() < 0.6:
        data, what = mutate_data(json.loads(system), rng)
        case.mutations.append(f"system {what}")
        system = json.dumps(data)
    else:
        system, what = mutate_text(system, rng)
        case.mutations.append(f"system {what}")
    (work / "network.yml").write_text(network)
    (work / "system.json").write_text(system)
    case.argv = ["run", f"--network-configuration={work / 'network.yml'}", f"--system-configuration={work / 'system.json'}",
                 f"--workload-configuration={ET_8}", f"--remote-memory-configuration={INPUTS / 'remote_memory.json'}", "-q"]  # fmt: skip


def _text(rng: random.Random, work: Path, case: Case) -> None:
    """An ASTRA-sim 1.0 text workload converted to Chakra files, or mutated options."""
    source = rng.choice(sorted(p for p in TEXT.glob("*.txt") if "Transformer" not in p.name))
    text = source.read_text()
    ranks, passes = "4", "1"
    if rng.random() < 0.3:
        option = rng.choice(("ranks", "passes"))
        value = rng.choice(("0", "-1", "1", "3", "1000", "99999999999999999999", str(2**63)))
        ranks, passes = (value, passes) if option == "ranks" else (ranks, value)
        case.mutations.append(f"--{option} {value}")
    else:
        text, what = mutate_text(text, rng)
        case.mutations.append(what)
    (work / "w.txt").write_text(text)
    case.argv = ["workload", "convert", str(work / "w.txt"), "--ranks", ranks, "--passes", passes, "--out", str(work / "out" / "w")]


def _sweep(rng: random.Random, work: Path, case: Case) -> None:
    """examples/sweep_3d cut to a few combinations, then mutated; run in this process."""
    data = yaml.safe_load((EXAMPLES / "sweep_3d" / "sweep.yaml").read_text())
    data["axes"] = [dict(a, values=a["values"][:2]) for a in data["axes"][:2]]
    if rng.random() < 0.1:
        data["unknown_key"] = 1
        case.mutations.append("unknown top-level key")
        case.must_refuse = True
        text = _dump_yaml(data)
    else:
        text = _yaml_case(_dump_yaml(data), rng, case.mutations)
    (work / "sweep.yaml").write_text(text)
    case.argv = ["sweep", "run", str(work / "sweep.yaml"), "--store", str(work / "s.sqlite"), "--jobs", "1", "-q"]


def _libra(rng: random.Random, work: Path, case: Case) -> None:
    """LIBRA's 3-D network, ResNet-50 workload and communicator, and constraint strings."""
    files = {"network": LIBRA / "network" / "3d_network.yml", "communicator": LIBRA / "communicator" / "ResNet_50_3d.yml",
             "cost": LIBRA / "cost_model" / "3d_cost_model.yml", "workload": LIBRA / "workload" / "ResNet_50.txt"}  # fmt: skip
    texts = {k: p.read_text() for k, p in files.items()}
    constraints = ["sum == 500"]
    target = rng.choice(("network", "communicator", "cost", "workload", "constraint"))
    if target == "constraint":
        constraints = [rng.choice(("sum == 500", "B0 >= B1", "B0 + B1 + B2 == 500", "sum <= 500", "B3 == 1", "sum == 0",
                                   "sum == -5", "B0 == B0", "2 * B0 <= sum", "sum >= 1e9", "B0 <", "sum == nan"))
                       for _ in range(rng.choice((1, 2, 3)))]  # fmt: skip
        case.mutations.append(f"constraints {constraints}")
    elif target == "workload":
        texts["workload"], what = mutate_text(texts["workload"], rng)
        case.mutations.append(f"workload {what}")
    else:
        texts[target] = _yaml_case(texts[target], rng, case.mutations)
        case.mutations[-1] = f"{target} {case.mutations[-1]}"
    for key, text in texts.items():
        (work / f"{key}{files[key].suffix}").write_text(text)
    case.argv = ["optimize", "bandwidth", "--network", str(work / "network.yml"), "--communicator", str(work / "communicator.yml"),
                 "--cost", str(work / "cost.yml"), "--workload", str(work / "workload.txt"), "--quiet", "--json", str(work / "r.json")]  # fmt: skip
    for c in constraints:
        case.argv += ["--constraint", c]


_RESULT: dict[str, str] = {}


def result_json() -> str:
    """The result JSON of the ring example (``trainsim run --json``), made once per process."""
    if "text" not in _RESULT:
        import tempfile

        from trainsim.cli.main import main

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "r.json"
            argv = ["run", str(RING_EXAMPLE / "platform.yaml"), "--workload", str(RING_EXAMPLE / "workload" / "ring"), "-q", "--json", str(out)]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert main(argv) == 0
            _RESULT["text"] = out.read_text()
    return _RESULT["text"]


def _result(rng: random.Random, work: Path, case: Case) -> None:
    """A result JSON, mutated, given to ``trainsim report``."""
    data = json.loads(result_json())
    if rng.random() < 0.1:
        del data["makespan_s"]
        case.mutations.append("del makespan_s")
        case.must_refuse = True
        text = json.dumps(data)
    elif rng.random() < 0.75:
        for _ in range(rng.choice((1, 2))):
            data, what = mutate_data(data, rng)
            case.mutations.append(what)
        text = json.dumps(data)
    else:
        text, what = mutate_text(json.dumps(data, indent=1), rng)
        case.mutations.append(what)
    (work / "r.json").write_text(text)
    case.argv = ["report", str(work / "r.json"), "--out", str(work / "report")]


def _chakra(rng: random.Random, work: Path, case: Case) -> None:
    """An 8-rank Chakra workload with rank 0's bytes mutated (or cut inside its last message)."""
    data = (ET_8.parent / "et.0.et").read_bytes()
    if rng.random() < 0.1:
        cut = len(data) - rng.randrange(1, 4)  # inside the last message: certainly truncated
        data = data[:cut]
        case.mutations.append(f"cut {len(data) - cut} bytes before the end")
        case.must_refuse = True
    else:
        for _ in range(rng.choice((1, 1, 2, 4))):
            data, what = mutate_bytes(data, rng)
            case.mutations.append(what)
    for rank in range(8):
        source = ET_8.parent / f"et.{rank}.et"
        (work / f"w.{rank}.et").write_bytes(data if rank == 0 else source.read_bytes())
    case.argv = ["run", f"--network-configuration={INPUTS / 'network' / 'ring8.yml'}", f"--system-configuration={INPUTS / 'system' / '1d_ring.json'}",
                 f"--workload-configuration={work / 'w'}", f"--remote-memory-configuration={INPUTS / 'remote_memory.json'}", "-q"]  # fmt: skip


def _options(rng: random.Random, work: Path, case: Case) -> None:
    """Numbers given on the command line of ``generate`` and ``optimize --budgets``."""
    value = rng.choice(("0", "-1", "1", "2", "3", "7", "1000000", str(10**12), "99999999999999999999", "1e3", "x"))
    option = rng.choice(("--dp", "--tp", "--pp", "--micro-batch", "--global-batch", "--seq", "--virtual-stages", "--zero", "--budgets"))
    case.mutations.append(f"{option} {value}")
    if option == "--budgets":
        spec = rng.choice((f"1:1000:{value}", f"{value}:1000:3", f"1:{value}:3"))
        case.mutations[-1] = f"--budgets {spec}"
        case.argv = ["optimize", "bandwidth", "--network", str(LIBRA / "network" / "3d_network.yml"), "--workload", str(LIBRA / "workload" / "ResNet_50.txt"),
                     "--communicator", str(LIBRA / "communicator" / "ResNet_50_3d.yml"), "--constraint", "sum == 500", "--quiet",
                     "--plot", str(work / "p.png"), "--budgets", spec]  # fmt: skip
        return
    case.argv = ["generate", "resnet50", option, value, "--out", str(work / "g" / "w"), "-q", "--no-memory-check"]


KINDS: dict[str, Callable[[random.Random, Path, Case], None]] = {
    "platform": _platform,
    "astra": _astra,
    "text": _text,
    "sweep": _sweep,
    "libra": _libra,
    "result": _result,
    "chakra": _chakra,
    "options": _options,
}


def make_case(kind: str, seed: int, work: Path) -> Case:
    """The case ``seed`` of ``kind``, its files written under ``work`` (an empty folder)."""
    rng = random.Random(f"{kind}:{seed}")
    case = Case(kind, seed, [])
    KINDS[kind](rng, work, case)
    return case


# -- running a case --------------------------------------------------------------------------


class _TimeUp(BaseException):
    """Raised in the case by SIGALRM: the case ran past its time bound (a BaseException, so
    that the command's own ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _time_bound(seconds: float) -> Iterator[None]:
    def alarm(_signum: int, _frame: Any) -> None:
        raise _TimeUp

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def signature(exc: BaseException) -> str:
    """Exception type and the innermost trainsim frame: one failure, however many cases hit it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/trainsim/" in f.filename]
    where = f"{frames[-1].filename.split('/trainsim/')[-1]}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


def run_case(case: Case, *, bound_s: float) -> Outcome:
    """Run ``case`` through the console script's ``main`` in this process; the verdict."""
    from trainsim.cli.main import main

    start = time.perf_counter()
    sink = io.StringIO()
    try:
        with _time_bound(bound_s), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = main(list(case.argv))
    except _TimeUp as exc:
        return Outcome(case, "hang", None, time.perf_counter() - start, f"hang in {signature(exc).split(' at ')[-1]}")
    except Exception as exc:  # a traceback: what the suite is here to find
        return Outcome(case, "traceback", None, time.perf_counter() - start, signature(exc), f"{type(exc).__name__}: {exc}"[:300])
    seconds = time.perf_counter() - start
    if code not in EXIT_OK:
        return Outcome(case, "traceback", code, seconds, f"exit code {code}", sink.getvalue()[-300:])
    if code == 0 and case.must_refuse:
        return Outcome(case, "accepted", code, seconds, f"{case.kind} accepted: {case.mutations[0]}")
    return Outcome(case, "ok", code, seconds)
