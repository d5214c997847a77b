"""LIBRA's reference inputs (shared/reference-workloads/libra) and small synthetic networks."""

import os
from pathlib import Path

import pytest

from trainsim.optimize.libra_inputs import load_communicator, load_network
from trainsim.optimize.traffic import traffic_from_text

SHARED = Path(os.environ.get("TRAINSIM_SHARED", Path(__file__).resolve().parents[2].parent / "shared"))
LIBRA = SHARED / "reference-workloads" / "libra"


def libra_path(*parts: str) -> Path:
    path = LIBRA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"LIBRA reference input {path} is missing (shared/ not beside the repository)")
    return path


def libra_case(workload: str, communicator: str, dims: str, pipelined: bool = True):
    """(network, traffic) of one of LIBRA's workloads on its 3D or 4D network."""
    net = load_network(libra_path("network", f"{dims}_network.yml"))
    comm = load_communicator(libra_path("communicator", communicator), net)
    return net, traffic_from_text(libra_path("workload", f"{workload}.txt"), comm, net, pipelined=pipelined)
