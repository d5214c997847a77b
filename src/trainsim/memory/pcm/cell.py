"""Cell and line model of 2-bit MLC PCM: levels, write pulses, spread, line write time.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Times in ns.

A 64 B line is 256 cells of 2 bits. Bits are taken most significant first within each byte,
byte 0 first, and paired: cell ``i`` holds bits ``2i`` and ``2i+1``, its level is
``2 * b[2i] + b[2i+1]`` (00, 01, 10, 11).

Write (issue 11; Rashidi, Jalili and Sarbazi-Azad): every written line gets one RESET pulse
(``reset_ns``), then SET program-and-verify pulses (``set_ns`` each); a cell needs
``iterations[level]`` of them. All cells are written in parallel (enough write drivers), so a
line takes its slowest cell::

    t_write = reset_ns + set_ns * max_cells(iterations)

Intermediate levels (and the merged tri-level state) are program-and-verify, so a cell needs
``nominal + round(clip(z * sd, -clip, clip))`` pulses, ``z ~ N(0, 1)``, at least one; 00 and 11
are single pulses and do not vary. The line time only needs the maximum over the cells of a
group; with ``F`` the distribution function of one cell's offset, the maximum over ``n`` cells
has distribution ``F ** n`` and is drawn by inversion, one uniform number per group (exact,
and it couples runs that differ only in how a line is stored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import LINE_BYTES, LINE_CELLS, CellConfig

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def as_lines(data: bytes | bytearray | NDArray[np.uint8]) -> NDArray[np.uint8]:
    """View bytes (a multiple of 64) or an ``(n, 64)`` uint8 array as an ``(n, 64)`` array."""
    if isinstance(data, (bytes, bytearray)):
        arr = np.frombuffer(bytes(data), dtype=np.uint8)
    else:
        arr = np.asarray(data, dtype=np.uint8)
    if arr.ndim == 1:
        if arr.size % LINE_BYTES:
            raise ConfigError(
                f"got {arr.size} bytes, expected a multiple of {LINE_BYTES} (whole lines)",
                field="data",
            )
        arr = arr.reshape(-1, LINE_BYTES)
    return arr


def bits_to_levels(bits: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Pair a ``(n, 2k)`` bit array (MSB-first) into ``(n, k)`` 2-bit cell levels."""
    return ((bits[:, 0::2] << 1) | bits[:, 1::2]).astype(np.uint8)


def cell_levels(lines: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The ``(n, 256)`` cell levels of ``(n, 64)`` line bytes."""
    return bits_to_levels(np.unpackbits(as_lines(lines), axis=1))


def level_counts(levels: NDArray[np.uint8]) -> IntArray:
    """``(n, 4)`` count of cells at each level 00, 01, 10, 11."""
    return np.stack([(levels == v).sum(axis=1) for v in range(4)], axis=1).astype(np.int64)


@dataclass(frozen=True)
class Spread:
    """Distribution of one program-and-verify cell's iteration offset (integers ``lo..hi``)."""

    offsets: IntArray
    cdf: FloatArray

    @classmethod
    def of(cls, cfg: CellConfig) -> Spread:
        """``round(clip(N(0, sd), -clip, clip))`` or, with the spread off, always 0."""
        if not cfg.spread:
            return cls(np.array([0], dtype=np.int64), np.array([1.0]))
        hi = int(round(cfg.spread_clip))
        offsets = np.arange(-hi, hi + 1, dtype=np.int64)
        # P(offset <= k) = P(z*sd < k + 0.5) for k < hi; the clip folds the tails onto +-hi.
        upper = [
            0.5 * (1.0 + math.erf((k + 0.5) / (cfg.spread_sd * math.sqrt(2.0))))
            for k in offsets[:-1]
        ]
        return cls(offsets, np.array([*upper, 1.0]))

    def max_offset(self, n_cells: IntArray, u: FloatArray) -> IntArray:
        """Largest offset among ``n_cells`` cells, drawn by inverting ``F ** n`` at ``u``."""
        n = np.asarray(n_cells, dtype=np.float64)[..., None]
        cdf_max = self.cdf ** np.maximum(n, 1.0)
        idx = (cdf_max < np.asarray(u)[..., None]).sum(axis=-1)
        return self.offsets[np.minimum(idx, self.offsets.size - 1)]

    def expected_max_offset(self, n_cells: IntArray) -> FloatArray:
        """Mean of the largest offset among ``n_cells`` cells (0 where ``n_cells`` is 0)."""
        n = np.asarray(n_cells, dtype=np.float64)[..., None]
        cdf_max = self.cdf ** np.maximum(n, 1.0)
        pmf = np.diff(cdf_max, axis=-1, prepend=0.0)
        mean = (pmf * self.offsets).sum(axis=-1)
        return np.where(np.asarray(n_cells) > 0, mean, 0.0)


def write_time_ns(
    cfg: CellConfig,
    spread: Spread,
    groups: tuple[tuple[IntArray, IntArray], ...],
    fixed_iterations: IntArray,
    u: FloatArray | None,
) -> FloatArray:
    """Line write time (ns) from its program-and-verify cell groups.

    ``groups`` are ``(nominal_iterations, n_cells)`` arrays, one pair per group of cells with
    the same target level; ``fixed_iterations`` (0 or 1) covers the single-pulse levels;
    ``u[..., g]`` is the uniform number of group ``g`` (``None``: the spread's mean).
    """
    iters = np.asarray(fixed_iterations, dtype=np.float64)
    for g, (nominal, n) in enumerate(groups):
        n = np.asarray(n)
        if u is None:
            off: FloatArray = spread.expected_max_offset(n)
        else:
            off = spread.max_offset(n, u[..., g]).astype(np.float64)
        need = np.maximum(1.0, np.asarray(nominal) + off)
        iters = np.maximum(iters, np.where(n > 0, need, 0.0))
    return cfg.reset_ns + cfg.set_ns * iters


def mlc_groups(
    cfg: CellConfig, counts: IntArray
) -> tuple[tuple[tuple[IntArray, IntArray], ...], IntArray]:
    """Program-and-verify groups and fixed pulses of lines stored as plain 4-level MLC."""
    n01, n10, n11 = counts[:, 1], counts[:, 2], counts[:, 3]
    groups = (
        (np.full_like(n01, cfg.iterations[1]), n01),
        (np.full_like(n10, cfg.iterations[2]), n10),
    )
    return groups, np.where(n11 > 0, cfg.iterations[3], 0)


def line_write_time_ns(
    data: bytes | NDArray[np.uint8],
    cfg: CellConfig | None = None,
    rng: np.random.Generator | None = None,
) -> FloatArray:
    """Write time (ns) of lines stored as plain MLC, one value per 64 B line.

    With ``cfg.spread`` on, ``rng`` draws the per-cell spread (its expectation without one).
    """
    cfg = cfg or CellConfig()
    counts = level_counts(cell_levels(as_lines(data)))
    groups, fixed = mlc_groups(cfg, counts)
    u = None if rng is None else rng.random((counts.shape[0], 2))
    return write_time_ns(cfg, Spread.of(cfg), groups, fixed, u)


__all__ = [
    "LINE_CELLS",
    "Spread",
    "as_lines",
    "bits_to_levels",
    "cell_levels",
    "level_counts",
    "line_write_time_ns",
    "mlc_groups",
    "write_time_ns",
]
