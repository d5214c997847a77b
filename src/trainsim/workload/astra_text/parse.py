"""Reader of ASTRA-sim 1.0 text workloads (DESIGN.md, workload layer; chakra-format.md §5.1).

Turns a ``.txt`` workload into a :class:`TextWorkload`: the parallelism header, its parameters
and one :class:`TextLayer` per layer line. It knows nothing of graphs; ``loop``
turns the result into per-rank graphs.

The format (whitespace-separated; tabs, spaces, ``\\r`` and blank lines are all whitespace):

- line 1, the header: a parallelism mode and its parameters, e.g. ``DATA``,
  ``HYBRID_DLRM 4``, ``HYBRID_TRANSFORMER model_parallel_NPU_group: 4``,
  ``HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 checkpoints: 2 2 11
  checkpoint_initiates: 2 19 10`` (each list is a count then that many layer indices);
- line 2: the number of layer lines;
- one line per layer, 12 columns (13 under ``HYBRID_CUSTOMIZED``: the layer's own
  parallelism): name, reserved (-1), then forward, input-gradient and weight-gradient phases as
  (compute cycles, collective, bytes) each, then the update delay in cycles.

LIBRA's workloads (astra-sim/libra ``inputs/workload``) are layer lines only, with no header and
no count (LIBRA takes the parallelism from its communicator file); they parse with
``mode=None``, and ``parse_text_workload(path, header="HYBRID_TRANSFORMER
model_parallel_NPU_group: 16")`` supplies the header they lack.

Reading is strict where ASTRA-sim 1.0 is silent: an unknown header or collective name, a wrong
column count, a number that is not a non-negative integer, a count on line 2 that does not match
the layer lines, or a checkpoint index outside the layers is a :class:`~trainsim.errors.TraceError`
naming the file, the line, the column and the value.

Units: compute times and update delays are ASTRA-sim 1.0 cycles (1 cycle = 1 ns at its fixed
1 GHz clock), kept here as the integers of the file; collective sizes are bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trainsim.errors import TraceError

MODES = (
    "DATA",
    "MODEL",
    "HYBRID_DATA_MODEL",
    "HYBRID_MODEL_DATA",
    "HYBRID_CUSTOMIZED",
    "MICRO",
    "DISTRIBUTED_INFERENCE",
    "HYBRID_DLRM",
    "HYBRID_DLRM_ENHANCED",
    "HYBRID_TRANSFORMER",
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
)
"""Header modes ASTRA-sim 1.0 decodes (``Workload::decode_parallelsim``)."""

LAYER_MODES = (
    "DATA",
    "MODEL",
    "HYBRID_DATA_MODEL",
    "HYBRID_MODEL_DATA",
    "MICRO",
    "DISTRIBUTED_INFERENCE",
    "HYBRID_DLRM",
    "HYBRID_DLRM_ENHANCED",
)
"""Values the 13th column of a ``HYBRID_CUSTOMIZED`` layer may take: those for which ASTRA-sim
1.0 decodes a set of involved dimensions without a model-parallel group."""

COLLECTIVES = ("NONE", "ALLREDUCE", "ALLGATHER", "ALLTOALL", "REDUCESCATTER", "ALLREDUCEALLTOALL")
"""Collective names of the text format. ``ALLREDUCEALLTOALL`` parses (ASTRA-sim 1.0 reads it)
but cannot be converted: ASTRA-sim 1.0 panics when it issues one and Chakra has no such type."""

PHASES = ("fwd", "ig", "wg")
"""The three phases of a layer: forward, input gradient, weight gradient."""

_PHASE_TITLES = {"fwd": "forward", "ig": "input-gradient", "wg": "weight-gradient"}
_BASE_COLUMNS = 12
_GROUP_LABEL = "model_parallel_NPU_group:"
_CHECKPOINTS_LABEL = "checkpoints:"
_INITIATES_LABEL = "checkpoint_initiates:"


@dataclass(frozen=True)
class Phase:
    """One phase of a layer: ``cycles`` of compute, then collective ``comm`` of ``nbytes``."""

    cycles: int  # ASTRA-sim 1.0 cycles (ns)
    comm: str  # one of COLLECTIVES
    nbytes: int  # bytes


@dataclass(frozen=True)
class TextLayer:
    """One layer line. ``line`` is its 1-based line number in the file, for error messages."""

    name: str
    line: int
    reserved: int
    fwd: Phase
    ig: Phase
    wg: Phase
    update_cycles: int  # delay after each of this layer's collectives, in cycles (ns)
    parallelism: str | None = None  # 13th column, HYBRID_CUSTOMIZED only

    def phase(self, which: str) -> Phase:
        """The phase named ``which`` (one of :data:`PHASES`)."""
        return {"fwd": self.fwd, "ig": self.ig, "wg": self.wg}[which]


@dataclass(frozen=True)
class TextWorkload:
    """A parsed text workload. ``mode`` is ``None`` for a LIBRA layers-only file."""

    path: str
    mode: str | None
    layers: tuple[TextLayer, ...]
    model_parallel_npu_group: int | None = None  # HYBRID_TRANSFORMER*
    dlrm_last_bottom_layer: int | None = None  # HYBRID_DLRM*
    checkpoints: tuple[int, ...] = ()  # HYBRID_TRANSFORMER_FWD_IN_BCKWD
    checkpoint_initiates: tuple[int, ...] = ()  # HYBRID_TRANSFORMER_FWD_IN_BCKWD


@dataclass(frozen=True)
class _Header:
    mode: str
    model_parallel_npu_group: int | None = None
    dlrm_last_bottom_layer: int | None = None
    checkpoints: tuple[int, ...] = ()
    checkpoint_initiates: tuple[int, ...] = ()


class _Reader:
    """Error helpers bound to one file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def error(
        self, line: int | None, message: str, column: int | None = None, hint: str | None = None
    ) -> TraceError:
        """``line`` ``None`` means the header given by the caller rather than a line of the file."""
        where = "given header" if line is None else f"line {line}"
        if column is not None:
            where += f", column {column}"
        return TraceError(f"{where}: {message}", file=self.path, hint=hint)

    def integer(
        self, token: str, line: int | None, column: int, what: str, *, minimum: int = 0
    ) -> int:
        try:
            value = int(token, 10)
        except ValueError:
            value = None
        if value is None or value < minimum:
            expected = "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"
            raise self.error(line, f"{what} is {token!r}, expected {expected}", column)
        return value


def parse_text_workload(path: str | Path, *, header: str | None = None) -> TextWorkload:
    """Read an ASTRA-sim 1.0 text workload (or a LIBRA layers-only one).

    ``header`` supplies a header line (e.g. ``"HYBRID_DLRM 4"``) for a file that has none; a file
    that has its own header cannot take another. Raises :class:`TraceError` on any malformed
    line, naming the file, line, column and value.
    """
    path_s = str(path)
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"cannot read the text workload: {exc}", file=path_s) from exc
    return parse_text(text, path=path_s, header=header)


def parse_text(text: str, *, path: str = "<text>", header: str | None = None) -> TextWorkload:
    """Parse the contents of a text workload; ``path`` is only used in error messages."""
    rd = _Reader(path)
    lines = [(n, raw.split()) for n, raw in enumerate(text.splitlines(), start=1)]
    lines = [(n, toks) for n, toks in lines if toks]
    if not lines:
        raise rd.error(
            1, "the file is empty; expected a parallelism header, a layer count and layer lines"
        )
    first_line, first = lines[0]
    layers_only = first[0] not in MODES and len(first) >= _BASE_COLUMNS and _is_int(first[1])
    if layers_only:
        if header is None:
            return TextWorkload(path, None, _layers(rd, lines, None))
        head = _parse_header(rd, header.split(), None)
        body = lines
    else:
        if header is not None:
            raise rd.error(
                first_line,
                f"the file has its own header {first[0]!r}; a header can only be given for a "
                "layers-only (LIBRA) file",
            )
        head = _parse_header(rd, first, first_line)
        body = _counted_body(rd, lines[1:], first_line)
    layers = _layers(rd, body, head.mode)
    _check_header_indices(rd, head, len(layers), None if layers_only else first_line)
    return TextWorkload(
        path,
        head.mode,
        layers,
        model_parallel_npu_group=head.model_parallel_npu_group,
        dlrm_last_bottom_layer=head.dlrm_last_bottom_layer,
        checkpoints=head.checkpoints,
        checkpoint_initiates=head.checkpoint_initiates,
    )


def _is_int(token: str) -> bool:
    try:
        int(token, 10)
    except ValueError:
        return False
    return True


def _counted_body(
    rd: _Reader, rest: list[tuple[int, list[str]]], header_line: int
) -> list[tuple[int, list[str]]]:
    """Check the layer count line and return the layer lines after it."""
    if not rest:
        raise rd.error(header_line + 1, "the layer count is missing after the header")
    count_line, count_toks = rest[0]
    if len(count_toks) != 1:
        raise rd.error(
            count_line,
            f"expected the layer count alone on this line, found {len(count_toks)} columns: {' '.join(count_toks)!r}",
        )
    count = rd.integer(count_toks[0], count_line, 1, "the layer count", minimum=1)
    body = rest[1:]
    if len(body) != count:
        raise rd.error(
            count_line,
            f"the layer count is {count} but {len(body)} layer lines follow",
            1,
        )
    return body


def _parse_header(rd: _Reader, toks: Sequence[str], line: int | None) -> _Header:
    where = "the given header" if line is None else "the header"
    mode = toks[0] if toks else ""
    if mode not in MODES:
        raise rd.error(
            line,
            f"{where} names parallelism {mode!r}, expected one of {', '.join(MODES)}",
            1,
        )
    params = list(toks[1:])
    if mode in ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"):
        if len(params) != 1:
            raise rd.error(
                line,
                f"{mode} takes one parameter, the index of the last bottom-MLP layer; found {params}",
            )
        return _Header(
            mode, dlrm_last_bottom_layer=rd.integer(params[0], line, 2, "the last bottom layer")
        )
    if mode in ("HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD"):
        return _transformer_header(rd, mode, params, line)
    if params:
        raise rd.error(line, f"{mode} takes no parameters, found {' '.join(params)!r}", 2)
    return _Header(mode)


def _transformer_header(rd: _Reader, mode: str, params: list[str], line: int | None) -> _Header:
    col = 2
    group = _labelled_int(rd, params, 0, _GROUP_LABEL, line, col, "the model-parallel NPU group", 1)
    if mode == "HYBRID_TRANSFORMER":
        if len(params) != 2:
            raise rd.error(
                line,
                f"{mode} takes only {_GROUP_LABEL} N; found extra {' '.join(params[2:])!r}",
                col + 2,
            )
        return _Header(mode, model_parallel_npu_group=group)
    pos = 2
    lists: list[tuple[int, ...]] = []
    for label in (_CHECKPOINTS_LABEL, _INITIATES_LABEL):
        count = _labelled_int(rd, params, pos, label, line, col + pos, f"the {label[:-1]} count", 0)
        items = params[pos + 2 : pos + 2 + count]
        if len(items) != count:
            raise rd.error(
                line,
                f"{label} announces {count} layer indices but {len(items)} follow",
                col + pos + 1,
            )
        lists.append(
            tuple(
                rd.integer(tok, line, col + pos + 2 + k, f"a {label[:-1]} layer index")
                for k, tok in enumerate(items)
            )
        )
        pos += 2 + count
    if pos != len(params):
        raise rd.error(
            line, f"unexpected {' '.join(params[pos:])!r} at the end of the header", col + pos
        )
    return _Header(
        mode, model_parallel_npu_group=group, checkpoints=lists[0], checkpoint_initiates=lists[1]
    )


def _labelled_int(
    rd: _Reader,
    params: list[str],
    pos: int,
    label: str,
    line: int | None,
    col: int,
    what: str,
    minimum: int,
) -> int:
    if pos >= len(params) or params[pos] != label:
        found = repr(params[pos]) if pos < len(params) else "the end of the line"
        raise rd.error(line, f"expected {label!r}, found {found}", col)
    if pos + 1 >= len(params):
        raise rd.error(line, f"{label!r} needs a number after it", col + 1)
    return rd.integer(params[pos + 1], line, col + 1, what, minimum=minimum)


def _check_header_indices(rd: _Reader, head: _Header, nlayers: int, line: int | None) -> None:
    """Layer indices named in the header must exist and make ASTRA-sim's loop well defined."""
    last = nlayers - 1
    if head.dlrm_last_bottom_layer is not None and head.dlrm_last_bottom_layer > last:
        raise rd.error(
            line,
            f"the last bottom layer is {head.dlrm_last_bottom_layer}, but the layers are 0..{last}",
            2,
        )
    for label, indices in (
        (_CHECKPOINTS_LABEL, head.checkpoints),
        (_INITIATES_LABEL, head.checkpoint_initiates),
    ):
        for index in indices:
            if index > last:
                raise rd.error(line, f"{label} layer {index} does not exist (layers are 0..{last})")
    marks = sorted(
        {*((i, 0) for i in head.checkpoints), *((i, 1) for i in head.checkpoint_initiates)}
    )
    for index in head.checkpoint_initiates:
        if index in head.checkpoints:
            raise rd.error(
                line,
                f"layer {index} is both a checkpoint and an initiating layer; ASTRA-sim 1.0 would recompute from it upwards",
            )
        below = [(i, kind) for i, kind in marks if i < index]
        if not below or below[-1][1] != 0:
            raise rd.error(
                line,
                f"layer {index} initiates a recomputation, but the nearest mark below it is not a "
                "checkpoint (ASTRA-sim 1.0 recomputes from the nearest checkpoint below the "
                "initiating layer up to it, with no other initiating layer in between)",
                hint="list, for each initiating layer, a checkpoint layer below it and above any lower initiating layer",
            )


def _layers(
    rd: _Reader, body: list[tuple[int, list[str]]], mode: str | None
) -> tuple[TextLayer, ...]:
    customized = mode == "HYBRID_CUSTOMIZED"
    ncols = _BASE_COLUMNS + (1 if customized else 0)
    out = []
    for line, toks in body:
        if len(toks) != ncols:
            expected = (
                "12 columns plus the layer's parallelism (13) under HYBRID_CUSTOMIZED"
                if customized
                else "12 columns: name, reserved, then cycles/collective/bytes for forward, "
                "input gradient and weight gradient, then the update delay"
            )
            raise rd.error(
                line,
                f"layer line has {len(toks)} columns, expected {expected}",
                hint=f"the line reads {' '.join(toks)!r}",
            )
        out.append(_layer(rd, toks, line, customized))
    return tuple(out)


def _layer(rd: _Reader, toks: list[str], line: int, customized: bool) -> TextLayer:
    name = toks[0]
    reserved = rd.integer(toks[1], line, 2, "the reserved column", minimum=-(2**63))
    phases = []
    for k, which in enumerate(PHASES):
        col = 3 + 3 * k
        title = _PHASE_TITLES[which]
        cycles = rd.integer(toks[col - 1], line, col, f"the {title} compute time (cycles)")
        comm = toks[col]
        if comm not in COLLECTIVES:
            raise rd.error(
                line,
                f"the {title} collective is {comm!r}, expected one of {', '.join(COLLECTIVES)}",
                col + 1,
            )
        nbytes = rd.integer(toks[col + 1], line, col + 2, f"the {title} collective size (bytes)")
        phases.append(Phase(cycles, comm, nbytes))
    update = rd.integer(toks[11], line, 12, "the update delay (cycles)")
    parallelism = None
    if customized:
        parallelism = toks[12]
        if parallelism not in LAYER_MODES:
            raise rd.error(
                line,
                f"layer {name!r} has parallelism {parallelism!r}, expected one of {', '.join(LAYER_MODES)}",
                13,
            )
    return TextLayer(name, line, reserved, phases[0], phases[1], phases[2], update, parallelism)
