"""Which network dimensions each collective of an ASTRA-sim 1.0 text workload spans
(DESIGN.md, workload layer; chakra-format.md §5.1, the "involved dimensions" table).

ASTRA-sim 1.0 (``Workload::decode_involved_dimensions``) gives every phase of a layer a vector
of involved dimensions from the parallelism mode:

| mode | forward and input gradient | weight gradient |
|---|---|---|
| DATA, MICRO, HYBRID_DLRM(_ENHANCED) | none | all |
| MODEL, DISTRIBUTED_INFERENCE | all | none |
| HYBRID_DATA_MODEL | dimension 0 | dimensions >= 1 |
| HYBRID_MODEL_DATA | dimensions >= 1 | dimension 0 |
| HYBRID_TRANSFORMER(_FWD_IN_BCKWD) | dimensions 0..b | dimensions > b |

with ``b`` from ``model_parallel_NPU_group`` (:func:`model_parallel_boundary`), the first layer
of a DLRM on all dimensions in every phase, and a HYBRID_CUSTOMIZED layer by its own mode.
A collective none of whose involved dimensions has more than one rank is not issued at all
(:func:`is_active`). Dimension sizes are counts of ranks; nothing here has a time unit.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainsim.errors import TraceError

ASTRA_SIM_1_DIMS = 10
"""Length of ASTRA-sim 1.0's involved-dimension vectors; our default when the network is unknown."""

_DATA_LIKE = ("DATA", "MICRO", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED")
_MODEL_LIKE = ("MODEL", "DISTRIBUTED_INFERENCE")
_TRANSFORMER = ("HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD")
ALL = "ALL"
"""Pseudo-mode of a DLRM's first layer: every phase on every dimension."""


def model_parallel_boundary(
    group: int, dim_sizes: Sequence[int], *, file: str | None = None
) -> int:
    """Index of the last dimension of the model-parallel (tensor-parallel) group, -1 for none.

    ASTRA-sim 1.0's ``Sys::break_dimension``: multiply dimension sizes from dimension 0 up until
    the product reaches ``group``. Where the product jumps past ``group``, ASTRA-sim 1.0 splits
    that dimension into two logical ones (``group / product`` and the rest) and runs the whole
    simulation on the split topology; a Chakra ``involved_dim`` cannot say that of the physical
    network, so that case is a :class:`TraceError` whose hint gives the split dimension sizes to
    describe the network with instead. A group larger than the machine is an error too (ASTRA-sim
    1.0 silently treats it as no model parallelism).
    """
    if group == 1:
        return -1
    product = 1
    for dim, size in enumerate(dim_sizes):
        if product * size < group:
            product *= size
            continue
        if product * size == group:
            return dim
        first = group // product
        if group % product or size % first:
            hint = f"no split of dimension {dim} (size {size}) gives a group of {group}"
        else:
            split = [*dim_sizes[:dim], first, size // first, *dim_sizes[dim + 1 :]]
            hint = (
                f"ASTRA-sim 1.0 would split dimension {dim} (size {size}) into {first} x {size // first}; "
                f"describe the network with those dimensions: {','.join(map(str, split))}"
            )
        raise TraceError(
            f"model_parallel_NPU_group {group} does not end on a dimension boundary of the network "
            f"{'x'.join(map(str, dim_sizes))}",
            file=file,
            hint=hint,
        )
    raise TraceError(
        f"model_parallel_NPU_group {group} is larger than the network "
        f"{'x'.join(map(str, dim_sizes))} ({product} ranks)",
        file=file,
    )


def phase_dims(mode: str, phase: str, ndims: int, boundary: int | None = None) -> tuple[bool, ...]:
    """Involved dimensions of ``phase`` ("fwd", "ig" or "wg") of a layer under ``mode``.

    ``mode`` is a header mode, a HYBRID_CUSTOMIZED layer's mode, or :data:`ALL`; ``boundary``
    is needed for the transformer modes (see :func:`model_parallel_boundary`).
    """
    weight = phase == "wg"
    if mode == ALL:
        return (True,) * ndims
    if mode in _DATA_LIKE:
        return (weight,) * ndims
    if mode in _MODEL_LIKE:
        return (not weight,) * ndims
    if mode == "HYBRID_DATA_MODEL":
        return tuple((d >= 1) == weight for d in range(ndims))
    if mode == "HYBRID_MODEL_DATA":
        return tuple((d == 0) == weight for d in range(ndims))
    if mode in _TRANSFORMER:
        if boundary is None:
            raise ValueError(f"{mode} needs the model-parallel boundary")
        return tuple((d > boundary) == weight for d in range(ndims))
    raise ValueError(f"no involved-dimension rule for mode {mode!r}")


def is_active(dims: Sequence[bool], dim_sizes: Sequence[int] | None) -> bool:
    """Whether ASTRA-sim would issue a collective on ``dims``: some involved dimension has more
    than one rank (with unknown sizes: some dimension is involved)."""
    if dim_sizes is None:
        return any(dims)
    return any(inv and size > 1 for inv, size in zip(dims, dim_sizes, strict=False))
