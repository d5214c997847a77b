import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainsim.errors import ConfigError
from trainsim.sweep import load_sweep
from trainsim.sweep.results import load_results
from trainsim.sweep.runner import run_sweep
from trainsim.sweep.store import SweepStore

from .conftest import write_spec


def test_expansion_filter_and_stable_keys(tmp_path):
    spec = load_sweep(write_spec(tmp_path / "s.yaml", bws=(10, 20), sizes=(1, 2, 3), filter="size != 2"))
    combos = list(spec.combinations())
    assert [c[0] for c in combos] == [{"bw": 10, "size": 1}, {"bw": 10, "size": 3}, {"bw": 20, "size": 1}, {"bw": 20, "size": 3}]
    assert combos[0][1]["platform"]["network"]["dims"][0]["bandwidth_gbps"] == 10


def test_results_and_resume(tmp_path, spec_file):
    spec = load_sweep(spec_file)
    with SweepStore(tmp_path / "a.sqlite") as store:
        first = run_sweep(spec, store, jobs=1)
        again = run_sweep(spec, store, jobs=1)
        assert first.ran == 50 and first.statuses == {"ok": 50}
        assert again.ran == 0 and again.skipped == 50
        assert store.count() == 50
    frame = load_results(tmp_path / "a.sqlite")
    # more bandwidth is never slower
    for size, part in frame.groupby("size"):
        times = part.sort_values("bw")["makespan_s"].tolist()
        assert times == sorted(times, reverse=True), size


def test_bad_sweep_files_name_the_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: {platform: {}, workload: {shift: {size_bytes: 1}}}\naxes: [{field: x, values: []}]\n")
    with pytest.raises(ConfigError, match="axes"):
        load_sweep(bad)
    bad.write_text("base: {platform: {}, workload: {}}\nbogus: 1\n")
    with pytest.raises(ConfigError, match="bogus"):
        load_sweep(bad)
    spec = write_spec(tmp_path / "f.yaml", filter="nope > 1")
    with pytest.raises(ConfigError, match="'nope', which is not an axis"):
        list(load_sweep(spec).combinations())


def test_invalid_combination_is_recorded_not_a_crash(tmp_path):
    spec = load_sweep(write_spec(tmp_path / "s.yaml", bws=(-5, 10), sizes=(8,), filter="bw != 0"))
    with SweepStore(tmp_path / "s.sqlite") as store:
        summary = run_sweep(spec, store, jobs=1)
        assert summary.statuses == {"error": 1, "ok": 1}
        rows = {r["bw"]: r for r in store.rows()}
    assert "bandwidth" in rows[-5]["error"]


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "trainsim.cli.main", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (Linux /proc), once the pool has started them."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        if found:
            return found
        time.sleep(0.05)
    return []


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaps has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the workers through /proc")
def test_sigkill_halfway_then_resume_counts_each_combination_once(tmp_path):
    spec = write_spec(tmp_path / "k.yaml", sizes=tuple(range(1, 101)), bws=(50, 100), steps=80)
    store_path = tmp_path / "k.sqlite"
    reference = tmp_path / "ref.sqlite"
    with SweepStore(reference) as store:
        run_sweep(load_sweep(spec), store, jobs=1)
    proc = _cli("sweep", str(spec), "--store", str(store_path), "--jobs", "2", "--quiet")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if store_path.exists():
            with SweepStore(store_path) as s:
                if s.count() >= 40:
                    break
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert workers, "the sweep runs its combinations in worker processes"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with SweepStore(store_path) as s:
        partial = s.count()
    assert 0 < partial < 200
    # the killed sweep's workers notice and end (they would otherwise wait for tasks forever)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)]
    rerun = _cli("sweep", str(spec), "--store", str(store_path), "--jobs", "2")
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert "already in" in out
    got = {r["key"]: r["makespan_s"] for r in load_results(store_path).to_dict("records")}
    want = {r["key"]: r["makespan_s"] for r in load_results(reference).to_dict("records")}
    assert got == want


def test_show_export_and_plot(tmp_path, spec_file):
    store = tmp_path / "p.sqlite"
    with SweepStore(store) as s:
        run_sweep(load_sweep(spec_file), s, jobs=1)
    show = _cli("sweep", "show", str(store), "--export", str(tmp_path / "out.csv"), "--top", "3")
    out, err = show.communicate(timeout=60)
    assert show.returncode == 0, err
    assert (tmp_path / "out.csv").read_text().count("\n") == 51
    chosen = _cli("sweep", "show", str(store), "--metrics", "events,comm_mean_s", "--top", "2")
    out, err = chosen.communicate(timeout=60)
    assert chosen.returncode == 0, err
    header = next(line for line in out.splitlines() if "events" in line)
    assert "comm_mean_s" in header and "makespan_s" not in header
    wrong = _cli("sweep", "show", str(store), "--metrics", "speed")
    _, err = wrong.communicate(timeout=60)
    assert wrong.returncode == 2 and "unknown metric 'speed'" in err
    plot = _cli("sweep", "plot", str(store), "--x", "size", "--y", "makespan_s", "--hue", "bw", "--out", str(tmp_path / "p.png"), "--logx")
    _, err = plot.communicate(timeout=60)
    assert plot.returncode == 0, err
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_shipped_example_sweep(tmp_path):
    from pathlib import Path

    spec = load_sweep(Path(__file__).resolve().parents[2] / "examples" / "sweep_3d" / "sweep.yaml")
    with SweepStore(tmp_path / "e.sqlite") as store:
        summary = run_sweep(spec, store, jobs=1)
    assert summary.statuses == {"ok": 243}
    frame = load_results(tmp_path / "e.sqlite")
    big = frame[frame["size"] == 1 << 30]
    # more chunks pipeline the three dimensions: never slower than one chunk here
    for _, part in big.groupby(["dim0", "dim1", "dim2"]):
        times = part.sort_values("chunks")["makespan_s"].tolist()
        assert times[1] < times[0]


BASE = "base:\n  platform: {network: {dims: [{topology: Ring, size: 4, bandwidth_gbps: 50, latency_ns: 500}]}}\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("  workload: {shift: {size_bytes: 8}}\nmetrics: [makespan]\n", r"metrics\[0\]: unknown metric 'makespan'"),
        ("  workload: {shift: {size_bytes: 8}}\n  backend: fast\n", "base.backend: unknown network backend 'fast'"),
        ("  workload: {shift: {size_bytes: 8}}\n  compat: astro\n", "base.compat: unknown compatibility mode 'astro'"),
        ("  workload: {shift: {size_byte: 8}}\n", "base.workload.shift.size_byte: unknown key 'size_byte'"),
        ("  workload: {collectiv: {type: all_reduce}}\n", "base.workload: unknown workload kind 'collectiv'"),
        ("  workload: {chakra: [a]}\n", "base.workload.chakra: got \\['a'\\]"),
    ],
)
def test_names_every_combination_would_meet_are_checked_on_load(tmp_path, text, match):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE + text)
    with pytest.raises(ConfigError, match=match):
        load_sweep(bad)


def test_base_may_leave_a_key_to_an_axis(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(BASE + "  workload: {shift: {}}\naxes:\n  - {field: workload.shift.size_bytes, name: size, values: [8, 16]}\n")
    with SweepStore(tmp_path / "s.sqlite") as store:
        assert run_sweep(load_sweep(spec), store, jobs=1).statuses == {"ok": 2}


def test_sweep_whose_every_combination_fails_exits_2_with_the_first_error(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(BASE + "  workload: {shift: {size_bytes: 8}}\naxes:\n  - {field: platform.system.preferred_dataset_split, name: c, values: [1, 2]}\n")
    proc = _cli("sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "-j", "1", "-q")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "all 2 combinations that ran failed" in err and "unknown key 'preferred_dataset_split'" in err


def test_first_error_is_printed_beside_the_counts(tmp_path):
    spec = write_spec(tmp_path / "s.yaml", bws=(-5, 10), sizes=(8,), filter="bw != 0")
    proc = _cli("sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "-j", "1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "(1 error, 1 ok)" in out and "first error: " in out and "bandwidth" in out


def test_the_store_is_named_never_guessed_beside_the_sweep_file(tmp_path):
    """No default store: one beside the sweep file would write into the source tree
    (examples/), and two sweep files of the same name would share one in a common folder."""
    (tmp_path / "specs").mkdir()
    spec = write_spec(tmp_path / "specs" / "s.yaml", bws=(10,), sizes=(8,))
    proc = _cli("sweep", str(spec), "-j", "1", "-q")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--store" in err, err
    assert sorted(p.name for p in spec.parent.iterdir()) == ["s.yaml"]
    proc = _cli("sweep", str(spec), "--store", str(tmp_path), "-j", "1", "-q")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--store: " in err and "is a folder" in err and len(err.splitlines()) == 1, err
    store = tmp_path / "results" / "new" / "s.sqlite"  # its folder is made, as --out's are
    proc = _cli("sweep", str(spec), "--store", str(store), "-j", "1", "-q")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and load_results(store)["status"].tolist() == ["ok"], err
    assert sorted(p.name for p in spec.parent.iterdir()) == ["s.yaml"]


def test_show_refuses_files_that_are_not_stores_and_leaves_them_alone(tmp_path):
    import sqlite3

    empty, other = tmp_path / "empty.db", tmp_path / "other.db"
    empty.write_bytes(b"")
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    for path in (empty, other):
        before = path.read_bytes()
        with pytest.raises(ConfigError, match="not a sweep store"):
            load_results(path)
        assert path.read_bytes() == before
    with pytest.raises(ConfigError, match="is a folder, not a sweep store"):
        load_results(tmp_path)
