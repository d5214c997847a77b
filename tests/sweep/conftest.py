"""Sweep files for the tests: a shift exchange on a ring whose bandwidth and size vary."""

import textwrap

import pytest

SPEC = """
base:
  platform:
    network:
      dims:
        - {{topology: Ring, size: 4, bandwidth_gbps: 50, latency_ns: 500}}
  workload:
    shift: {{size_bytes: 1024, steps: {steps}}}
axes:
  - field: platform.network.dims[0].bandwidth_gbps
    name: bw
    values: {bws}
  - field: workload.shift.size_bytes
    name: size
    values: {sizes}
filter: "{filter}"
"""


def write_spec(path, *, bws=(10, 50, 100, 200, 400), sizes=(1024, 4096, 65536, 1048576, 4194304, 16777216, 1, 2, 3, 5), filter="bw > 0", steps=2):
    path.write_text(textwrap.dedent(SPEC.format(bws=list(bws), sizes=list(sizes), filter=filter, steps=steps)))
    return path


@pytest.fixture
def spec_file(tmp_path):
    return write_spec(tmp_path / "sweep.yaml")
