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


def test_presence_bits_follow_what_was_given_zero_values_included():
    from trainsim.enums import CommType
    from trainsim.workload.graph import Attr

    b = GraphBuilder()
    b.add(1, NodeType.COMP_NODE)
    b.add(2, NodeType.COMM_COLL_NODE, is_cpu_op=False, comm_type=CommType.ALL_REDUCE, comm_size=0)
    b.add(3, NodeType.COMM_SEND_NODE, comm_dst=0, comm_tag=0, pg_name="", involved_dim=(True,))
    g = b.build()
    assert g.present[0] == 0
    assert g.present[1] == Attr.IS_CPU_OP | Attr.COMM_TYPE | Attr.COMM_SIZE
    assert g.present[2] == Attr.COMM_DST | Attr.COMM_TAG | Attr.PG_NAME | Attr.INVOLVED_DIM
    assert g.present.dtype == np.uint16
    assert g.comm_src[2] == -1 and g.comm_size[0] == 0 and not g.is_cpu_op[0]


def test_dep_indices_resolves_ids_and_marks_absent_ones():
    b = GraphBuilder()
    b.add(10, NodeType.COMP_NODE)
    b.add(20, NodeType.COMP_NODE, data_deps=[10, 99], ctrl_deps=[30])
    b.add(30, NodeType.COMP_NODE, ctrl_deps=[10])
    g = b.build()
    ptr, pos = g.dep_indices(ctrl=True)
    assert ptr.tolist() == [0, 0, 3, 4]
    assert pos.tolist() == [0, -1, 2, 0]
    ptr, pos = g.dep_indices(ctrl=False)
    assert ptr.tolist() == [0, 0, 2, 2]
    assert pos.tolist() == [0, -1]


def test_use_ctrl_deps_sets_the_default_of_deps_of():
    b = GraphBuilder(use_ctrl_deps=False)
    b.add(1, NodeType.COMP_NODE)
    b.add(2, NodeType.COMP_NODE, ctrl_deps=[1])
    g = b.build()
    assert g.deps_of(1) == []
    assert g.deps_of(1, ctrl=True) == [1]
    g.use_ctrl_deps = True
    assert g.deps_of(1) == [1]
