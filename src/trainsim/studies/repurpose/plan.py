"""Execution plans: what each worker receives and computes, stage by stage, for one sample.

Place: ``trainsim.studies.repurpose``; built by :mod:`.methods`, read by :mod:`.graphs` (per-worker
Chakra graphs) and, through them, :mod:`.latency` (simulated).

A plan is a sequence of stages. Stage ``s`` first moves ``transfers[src, dst]`` activations
from worker ``src`` to ``dst`` (produced by the previous stage, or the sensor data for the
first), then each worker ``k`` computes ``flops[k]``. Layers of a split network map to stages
one to one; the output layer's partial sums add a last ``reduce`` stage that sends them to the
root worker and adds them there.

FLOP counting: 2 per nonzero weight (multiply and add) plus 1 per bias; ReLU is not counted.
The bytes a stage touches (for a roofline) are its weights and biases, read once per batch
(``weight_bytes``), and its inputs and outputs, per sample (``act_bytes``): a batch of ``B``
samples touches ``weight_bytes + B act_bytes`` (:meth:`Stage.mem_bytes`).
Units: ``transfers`` in scalars per sample (bytes = x :data:`.comm.BYTES_PER_SCALAR`),
``flops`` in FLOP per sample, ``weight_bytes`` in bytes, ``act_bytes`` in bytes per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.studies.repurpose.comm import BYTES_PER_SCALAR, needed_inputs, transfer_pairs

ROOT = 0
"""The worker that ends up with the class logits."""


@dataclass(frozen=True)
class Stage:
    """One step of a plan: transfers ``(K, K)`` then compute ``(K,)`` (units in the module doc)."""

    name: str
    transfers: np.ndarray  # (K, K) int64 scalars per sample, src row -> dst column
    flops: np.ndarray  # (K,) float64 FLOP per sample
    weight_bytes: np.ndarray  # (K,) float64 bytes of weights and biases, once per batch
    act_bytes: np.ndarray  # (K,) float64 bytes of inputs and outputs per sample

    def mem_bytes(self, batch: int = 1) -> np.ndarray:
        """``(K,)`` bytes each worker touches computing this stage for ``batch`` samples."""
        return self.weight_bytes + batch * self.act_bytes

    @property
    def workers(self) -> int:
        return int(self.flops.shape[0])

    @property
    def scalars(self) -> int:
        return int(self.transfers.sum())


def _layer_work(
    weights: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> tuple[float, float, float]:
    """FLOP per sample, weight bytes and activation bytes per sample of computing
    ``weights[rows][:, cols]`` times an input, plus biases."""
    block = weights[np.ix_(rows, cols)]
    nnz = int(np.count_nonzero(block))
    n_in_seen = int(np.count_nonzero(np.any(block != 0, axis=0)))
    return (
        2.0 * nnz + rows.size,
        float(BYTES_PER_SCALAR * (nnz + rows.size)),
        float(BYTES_PER_SCALAR * (n_in_seen + rows.size)),
    )


def split_plan(
    weights: tuple[np.ndarray, ...], owners: tuple[np.ndarray, ...], workers: int
) -> tuple[Stage, ...]:
    """Plan of a network whose hidden neurons are split: ``owners[l]`` owns layer ``l``'s inputs.

    ``owners`` has one entry per layer (the pixels' owners first). Hidden layers fetch the
    inputs their neurons use; the output layer is computed as partial sums over each worker's
    inputs, and those (``n_classes`` scalars from every other worker) are reduced on :data:`ROOT`.
    """
    stages = []
    n_layers = len(weights)
    for idx in range(n_layers - 1):
        w, owner_in, owner_out = weights[idx], owners[idx], owners[idx + 1]
        need = needed_inputs(w, owner_out, workers)
        work = np.array(
            [
                _layer_work(
                    w, np.flatnonzero(owner_out == k), np.flatnonzero(need[k] | (owner_in == k))
                )
                for k in range(workers)
            ]
        )
        stages.append(
            Stage(
                f"fc{idx + 1}",
                transfer_pairs(w, owner_out, owner_in, workers),
                work[:, 0].copy(),
                work[:, 1].copy(),
                work[:, 2].copy(),
            )
        )
    w_out, owner_in = weights[-1], owners[-1]
    n_cls = w_out.shape[0]
    every = np.arange(n_cls)
    work = np.array(
        [_layer_work(w_out, every, np.flatnonzero(owner_in == k)) for k in range(workers)]
    )
    not_root = np.arange(workers) != ROOT
    work[not_root, 0] -= n_cls  # the bias is added once, on the root
    work[not_root, 1] -= BYTES_PER_SCALAR * n_cls
    stages.append(
        Stage(
            f"fc{n_layers}",
            np.zeros((workers, workers), dtype=np.int64),
            work[:, 0].copy(),
            work[:, 1].copy(),
            work[:, 2].copy(),
        )
    )
    reduce = np.zeros((workers, workers), dtype=np.int64)
    reduce[:, ROOT] = n_cls
    reduce[ROOT, ROOT] = 0
    red_flops = np.zeros(workers)
    red_flops[ROOT] = float(n_cls * (workers - 1))
    red_act = np.zeros(workers)
    red_act[ROOT] = float(BYTES_PER_SCALAR * n_cls * (workers + 1))  # K partial sums in, one out
    stages.append(Stage("reduce", reduce, red_flops, np.zeros(workers), red_act))
    return tuple(stages)


def replicated_plan(
    weights: tuple[np.ndarray, ...], pixel_owner: np.ndarray, workers: int, *, gather_to_root: bool
) -> tuple[Stage, ...]:
    """Plan of the whole model run unsplit: the input is all-gathered and every worker runs the
    whole model (``gather_to_root=False``), or the input is gathered to :data:`ROOT` only."""
    patch = np.bincount(pixel_owner, minlength=workers).astype(np.int64)
    first = np.repeat(patch[:, None], workers, axis=1)
    if gather_to_root:
        first[:, np.arange(workers) != ROOT] = 0
    np.fill_diagonal(first, 0)
    runs = np.ones(workers, dtype=bool) if not gather_to_root else (np.arange(workers) == ROOT)
    stages = []
    for idx, w in enumerate(weights):
        f, wb, ab = _layer_work(w, np.arange(w.shape[0]), np.arange(w.shape[1]))
        transfers = first if idx == 0 else np.zeros((workers, workers), dtype=np.int64)
        stages.append(
            Stage(
                f"fc{idx + 1}",
                transfers,
                np.where(runs, f, 0.0),
                np.where(runs, wb, 0.0),
                np.where(runs, ab, 0.0),
            )
        )
    return tuple(stages)


def plan_scalars(stages: tuple[Stage, ...]) -> int:
    """Activations moved per sample by a whole plan (its "communication")."""
    return sum(s.scalars for s in stages)
