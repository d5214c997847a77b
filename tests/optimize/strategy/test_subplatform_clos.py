"""A job on part of a clos platform without dims is cut from the fabric's derived dims."""

import pytest
import yaml

from trainsim.config.platform import load_platform, parse_platform
from trainsim.optimize.strategy.subplatform import sub_platform_document

PATH = "examples/clos_h100/platform.yaml"


def test_a_job_on_part_of_a_clos_is_cut_from_its_derived_dims():
    with open(PATH, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    assert sub_platform_document(doc, 2048, PATH) is doc  # the whole machine: the fabric as it is
    cut = parse_platform(sub_platform_document(doc, 512, PATH), PATH)
    full = load_platform(PATH).network.dims
    # 8 GPUs per node x 32 nodes x 2 of the pod's 4 leaf groups, at the derived bandwidths
    assert cut.network.sizes == (8, 32, 2)
    assert [d.bandwidth for d in cut.network.dims] == pytest.approx([d.bandwidth for d in full[:3]])
    assert [d.latency_ns for d in cut.network.dims] == [d.latency_ns for d in full[:3]]
    assert cut.network.fabric is None
