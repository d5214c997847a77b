"""`trainsim run` end to end: the shipped example explained by hand, and bad inputs of every
file kind giving exit code 2 and one line, never a traceback."""

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.reference_data import RESULTS
from trainsim.cli.main import main
from trainsim.workload import GraphBuilder, write_workload

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ring_allreduce"


def test_send_recv_ring_allreduce_by_hand(tmp_path):
    out = tmp_path / "r.json"
    code = main(["run", str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring"), "--json", str(out), "-q"])
    assert code == 0
    result = json.loads(out.read_text())
    # 14 SEND/RECV steps of 131,072 B to the ring neighbour, each one hop:
    # trunc(500 ns + 131072 B / (50 * 2**30 B/s)) = 2,941 ns; 7 of them are followed by a
    # 7 us reduction (COMP) before the next send. Every rank is in step with its neighbours.
    hop_ns = math.trunc(500 + 131072 / (50 * 2**30 / 1e9))
    expected_ns = 14 * hop_ns + 7 * 7_000
    assert hop_ns == 2941 and expected_ns == 90_174
    assert {round(r["finish_s"] * 1e9) for r in result["ranks"]} == {expected_ns}
    assert result["ranks"][0]["compute_s"] == pytest.approx(49e-6)
    assert result["ranks"][0]["exposed_comm_s"] == pytest.approx((expected_ns - 49_000) * 1e-9)


def test_astra_flags_reproduce_a_reference_case(tmp_path):
    out = tmp_path / "r.json"
    code = main([
        "run",
        f"--workload-configuration={RESULTS / 'inputs/workload/all_reduce/8npus_1MiB/et'}",
        f"--system-configuration={RESULTS / 'inputs/system/1d_ring.json'}",
        f"--network-configuration={RESULTS / 'inputs/network/ring8.yml'}",
        f"--remote-memory-configuration={RESULTS / 'inputs/remote_memory.json'}",
        "--json", str(out), "-q",
    ])
    assert code == 0
    assert {round(r["finish_s"] * 1e9) for r in json.loads(out.read_text())["ranks"]} == {64_440}


NET = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYS = '{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}'
MEM = '{"memory-type": "NO_MEMORY_EXPANSION"}'


def _write_inputs(d: Path, *, net=NET, system=SYS, mem=MEM, groups=None, ranks=4, graph=None):
    (d / "net.yml").write_text(net)
    (d / "sys.json").write_text(system)
    (d / "mem.json").write_text(mem)
    if groups is not None:
        (d / "groups.json").write_text(groups)
    graphs = []
    for rank in range(ranks):
        b = GraphBuilder(rank=rank)
        (graph or _one_allreduce)(b, rank)
        graphs.append(b.build())
    write_workload(str(d / "wl"), graphs)
    return d


def _one_allreduce(b, rank):
    b.add(1, 7, "ar", comm_type=0, comm_size=1 << 20)


def _run(d: Path, *extra):
    args = [
        sys.executable, "-m", "trainsim.cli.main", "run",
        f"--workload-configuration={d / 'wl'}",
        f"--system-configuration={d / 'sys.json'}",
        f"--network-configuration={d / 'net.yml'}",
        f"--remote-memory-configuration={d / 'mem.json'}",
        *extra,
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


BAD_INPUTS = {
    # network YAML
    "net: unknown key": dict(net=NET + "color: red\n", match="color"),
    "net: unknown topology": dict(net=NET.replace("Ring", "Torus"), match="Torus"),
    "net: lists of different lengths": dict(net=NET.replace("[ 500.0 ]", "[ 500.0, 10.0 ]"), match="latency"),
    "net: dimension of size 1": dict(net=NET.replace("[ 4 ]", "[ 1 ]"), match="npus_count"),
    "net: bandwidth not a number": dict(net=NET.replace("50.0", "fast"), match="bandwidth"),
    "net: YAML syntax": dict(net="topology: [ Ring\n", match="net.yml"),
    # system JSON
    "sys: unknown key": dict(system=SYS.replace('"endpoint-delay"', '"endpoint-dealy"'), match="endpoint-dealy"),
    "sys: unknown algorithm": dict(system=SYS.replace('["ring"], "all-gather', '["rng"], "all-gather'), match="rng"),
    "sys: negative splits": dict(system=SYS.replace('"preferred-dataset-splits": 4', '"preferred-dataset-splits": -4'), match="preferred-dataset-splits"),
    "sys: JSON syntax": dict(system=SYS[:-1], match="sys.json"),
    "sys: collective type not configured": dict(system=SYS.replace('"all-reduce-implementation": ["ring"], ', ""), match="all-reduce-implementation: no algorithm configured"),
    "sys: more algorithm entries than dims": dict(system=SYS.replace('"all-reduce-implementation": ["ring"]', '"all-reduce-implementation": ["ring", "ring"]'), match="all-reduce-implementation"),
    # remote-memory JSON
    "mem: unknown memory type": dict(mem='{"memory-type": "INFINITE"}', match="INFINITE"),
    "mem: unknown key": dict(mem='{"memory-type": "NO_MEMORY_EXPANSION", "speed": 1}', match="speed"),
    # comm-group JSON
    "groups: rank out of range": dict(groups='{"1": [0, 9]}', match="9"),
    "groups: duplicate member": dict(groups='{"1": [0, 0]}', match="groups.json"),
    # workload (Chakra ET)
    "et: rank count does not match": dict(ranks=3, match="wl.3.et"),
    "et: more rank files than NPUs": dict(ranks=5, match="5 rank files"),
    "net: far more NPUs than rank files": dict(net=NET.replace("[ 4 ]", "[ 1000000000000 ]"), match="1,000,000,000,000 NPUs: estimated 1,000,000,000,000 ranks, over the limit"),
    "et: send without destination": dict(graph=lambda b, r: b.add(1, 5, "s", comm_size=8, comm_tag=0), match="comm_dst"),
    "et: group not defined": dict(graph=lambda b, r: b.add(1, 7, "ar", comm_type=0, comm_size=64, pg_name="5"), match="'5'"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gives_exit_2_and_one_line(tmp_path, case):
    spec = dict(BAD_INPUTS[case])
    match = spec.pop("match")
    d = _write_inputs(tmp_path, **spec)
    extra = ["--comm-group-configuration", str(d / "groups.json")] if "groups" in spec else []
    proc = _run(d, *extra)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line and not line.startswith("hint:")]
    assert len(lines) == 1, proc.stderr
    assert match in lines[0], lines[0]


def test_corrupt_et_file_is_one_line(tmp_path):
    d = _write_inputs(tmp_path)
    (d / "wl.2.et").write_bytes(b"\x05\x0a\x03abc\xff\xff\xff")
    proc = _run(d)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "wl.2.et" in proc.stderr


def test_console_script_is_installed_or_module_runs():
    exe = shutil.which("trainsim")
    cmd = [exe, "--version"] if exe else [sys.executable, "-m", "trainsim.cli.main", "--version"]
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.startswith("trainsim ")


BAD_OPTIONS = {
    "--json in a missing folder": (["--json", "{d}/no/such/r.json"], "--json: cannot write"),
    "--json is a folder": (["--json", "{d}"], "--json: "),
    "--trace in a missing folder": (["--trace", "{d}/no/such/t.json"], "--trace: cannot write"),
    "two workloads": (["--workload", "{d}/other"], "name two workloads"),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_option_gives_exit_2_and_one_line_before_running(tmp_path, case):
    args, match = BAD_OPTIONS[case]
    d = _write_inputs(tmp_path)
    proc = _run(d, *(a.format(d=d) for a in args))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert match in proc.stderr


def test_platform_file_with_astra_configuration_is_refused(tmp_path):
    d = _write_inputs(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "trainsim.cli.main", "run", str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring"),
         "--network-configuration", str(d / "net.yml")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "platform file and ASTRA-sim's network configuration were both given" in proc.stderr


def test_os_error_on_a_named_file_is_one_line(monkeypatch, capsys):
    """The last resort for an OSError the path checks cannot foresee (a full disk, say)."""
    import trainsim.cli.schema_cmd  # noqa: F401  registers the command

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device", "/full/disk/s.json")

    monkeypatch.setattr(Path, "write_text", fail)
    assert main(["schema", "--out", "s.json"]) == 2
    assert capsys.readouterr().err == "trainsim: error: /full/disk/s.json: No space left on device\n"
