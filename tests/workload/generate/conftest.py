"""Helpers for generator tests: collective listings of generated graphs."""

from trainsim.enums import CommType, NodeType
from trainsim.workload.models import TransformerSpec


def collectives(graph, name_part=""):
    """[(name, CommType name, comm_size, pg_name)] of the graph's collectives."""
    out = []
    for i in range(len(graph)):
        if graph.types[i] == NodeType.COMM_COLL_NODE and name_part in graph.names[i]:
            out.append((graph.names[i], CommType(int(graph.comm_type[i])).name, int(graph.comm_size[i]), graph.pg_name[i]))
    return out


def toy(**kw):
    base = dict(name="toy", layers=2, hidden=1024, heads=16, ffn=4096, vocab=1000, seq=512)
    base.update(kw)
    return TransformerSpec(**base)
