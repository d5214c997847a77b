"""LIBRA's reference inputs (reference-data/reference-workloads/libra) and small synthetic networks."""

from pathlib import Path

from tests.helpers.reference_data import WORKLOADS
from trainsim.optimize.libra_inputs import load_communicator, load_network
from trainsim.optimize.traffic import traffic_from_text

LIBRA = WORKLOADS / "libra"


def libra_path(*parts: str) -> Path:
    """One of LIBRA's input files, e.g. ``libra_path("network", "3d_network.yml")``."""
    return LIBRA.joinpath(*parts)


def libra_case(workload: str, communicator: str, dims: str, pipelined: bool = True):
    """(network, traffic) of one of LIBRA's workloads on its 3D or 4D network."""
    net = load_network(libra_path("network", f"{dims}_network.yml"))
    comm = load_communicator(libra_path("communicator", communicator), net)
    return net, traffic_from_text(libra_path("workload", f"{workload}.txt"), comm, net, pipelined=pipelined)
