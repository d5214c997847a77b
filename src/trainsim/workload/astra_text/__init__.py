"""ASTRA-sim 1.0 text workloads -> per-rank Chakra-style graphs (DESIGN.md, workload layer;
chakra-format.md §5.1; docs/workloads.md).

The public face of three small modules:

- ``parse``: :func:`parse_text_workload` reads the file strictly into a
  :class:`TextWorkload` (header mode and parameters, one :class:`TextLayer` per line);
- ``dims``: which network dimensions each phase's collective spans, per mode;
- ``loop``: :func:`text_to_graphs` replays ASTRA-sim 1.0's training loop
  (``Workload::iterate_*``) into one :class:`~trainsim.workload.graph.WorkloadGraph` per rank.

Units: the file's compute times and update delays are ASTRA-sim 1.0 cycles, and its clock is
1 GHz, so a cycle is a nanosecond: ``duration_s`` = cycles x 1e-9. Collective sizes are bytes.

Differences from chakra's own text converter (``chakra_converter Text``), which otherwise gives
the same nodes, in the same order, with the same names, types, sizes and dependencies for the
modes it supports (MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM):

- durations: chakra copies cycles into ``duration_micros`` (1000x too long); we convert;
- ``involved_dim``: chakra writes none (ASTRA-sim then uses every dimension); we write ASTRA-sim
  1.0's per-mode dimensions;
- update delays: chakra drops them; we add one CPU compute node after each collective;
- collectives of type NONE, or with no involved dimension of more than one rank: chakra writes
  a zero-byte all-reduce for NONE in DATA/MODEL/HYBRID modes; ASTRA-sim 1.0 issues nothing, nor
  do we;
- HYBRID_DLRM: ASTRA-sim 1.0 makes the layer *after* the last bottom layer wait for the forward
  all-to-all (chakra: the last bottom layer itself), and lets the first layer's weight-gradient
  compute run before the backward all-to-all ends (chakra makes it wait); only the end of the
  pass waits for it;
- MICRO with several layers: ASTRA-sim 1.0 issues only the first layer's collective (chakra:
  all of them);
- node ids: chakra numbers on across ranks (rank 1 starts where rank 0 ended); every rank here
  has the same ids, which Chakra allows.

Modes chakra cannot convert are supported too: HYBRID_TRANSFORMER (with the network's dimension
sizes for its model-parallel boundary), HYBRID_TRANSFORMER_FWD_IN_BCKWD (forward recomputation
from checkpoints), HYBRID_CUSTOMIZED (per-layer parallelism), HYBRID_DLRM_ENHANCED and
DISTRIBUTED_INFERENCE.
"""

from __future__ import annotations

from trainsim.workload.astra_text.dims import is_active, model_parallel_boundary, phase_dims
from trainsim.workload.astra_text.loop import COMM_TYPES, text_to_graphs
from trainsim.workload.astra_text.parse import (
    COLLECTIVES,
    LAYER_MODES,
    MODES,
    PHASES,
    Phase,
    TextLayer,
    TextWorkload,
    parse_text,
    parse_text_workload,
)

__all__ = [
    "COLLECTIVES",
    "COMM_TYPES",
    "LAYER_MODES",
    "MODES",
    "PHASES",
    "Phase",
    "TextLayer",
    "TextWorkload",
    "is_active",
    "model_parallel_boundary",
    "parse_text",
    "parse_text_workload",
    "phase_dims",
    "text_to_graphs",
]
