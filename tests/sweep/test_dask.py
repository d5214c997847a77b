"""A real dask.distributed scheduler and two workers, as separate processes on localhost."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainsim.sweep import load_sweep
from trainsim.sweep.results import load_results
from trainsim.sweep.runner import run_sweep
from trainsim.sweep.store import SweepStore

from .conftest import write_spec

pytest.importorskip("distributed")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster(tmp_path):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    bin_dir = Path(sys.executable).parent
    scheduler_cmd = [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
    procs = [subprocess.Popen(scheduler_cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    address = f"tcp://127.0.0.1:{port}"
    for _ in range(2):
        worker_cmd = [str(bin_dir / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"]
        procs.append(subprocess.Popen(worker_cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        from distributed import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    if len(client.scheduler_info()["workers"]) == 2:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the Dask scheduler and workers did not come up within 60 s")
            time.sleep(0.5)
        yield address
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_dask_sweep_gives_the_local_rows(tmp_path, dask_cluster):
    spec_path = write_spec(tmp_path / "d.yaml")
    with SweepStore(tmp_path / "local.sqlite") as store:
        run_sweep(load_sweep(spec_path), store, jobs=1)
    cli = subprocess.run(
        [sys.executable, "-m", "trainsim.cli.main", "sweep", str(spec_path), "--store", str(tmp_path / "dask.sqlite"), "--dask", dask_cluster],
        capture_output=True, text=True, timeout=180,
    )
    assert cli.returncode == 0, cli.stderr
    assert "ran 50 (50 ok)" in cli.stdout
    cols = ["key", "bw", "size", "status", "makespan_s", "events"]
    local = load_results(tmp_path / "local.sqlite")[cols].sort_values("key").reset_index(drop=True)
    remote = load_results(tmp_path / "dask.sqlite")[cols].sort_values("key").reset_index(drop=True)
    assert len(local) == 50
    assert local.equals(remote)
