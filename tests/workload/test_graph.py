import numpy as np
import pytest

from trainsim.enums import NodeType
from trainsim.errors import TraceError
from trainsim.workload import GraphBuilder


def test_builder_sorts_by_id_and_packs_deps():
    b = GraphBuilder(source="x.0.et")
    b.add(5, NodeType.COMP_NODE, "late", duration_s=2e-6, data_deps=[1])
    b.add(1, NodeType.COMP_NODE, "early", duration_s=1e-6)
    g = b.build()
    assert g.ids.tolist() == [1, 5]
    assert g.names == ["early", "late"]
    assert g.deps_of(1) == [1]
    assert g.deps_of(0) == []
    np.testing.assert_allclose(g.duration_s, [1e-6, 2e-6])


def test_duplicate_ids_are_a_trace_error():
    b = GraphBuilder(source="x.0.et")
    b.add(1, NodeType.COMP_NODE)
    b.add(1, NodeType.COMP_NODE)
    with pytest.raises(TraceError, match="node id 1 appears more than once"):
        b.build()
