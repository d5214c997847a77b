"""Line contents for the PCM study: a documented synthetic mix, and real bytes of package files.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Lines are ``(n, 64)`` uint8 arrays.

Contents decide which lines qualify for tri-level storage, so they are generated, never
assumed. Every generator is deterministic for a seed, and offline.

The synthetic kinds (little-endian, as on x86):

=========== ==================================================================================
kind        one 64 B line of ...
=========== ==================================================================================
zeros       zero bytes (null lines: Dusser, Piquet and Seznec, ICS 2009)
small_int   16 int32 drawn uniformly from [-128, 255] (counters, flags, indices, enums)
int16       16 int32 with 16-bit magnitudes: uniform in [256, 32767], negated with p = 0.25
pointer     8 uint64 heap pointers 0x00007f followed by 24 random region bits shared by the
            line, then offsets < 64 KiB, 16 B aligned
double      8 float64 drawn from N(0, 100) (full-entropy mantissas)
text        64 characters with English letter frequencies, spaces and a little punctuation
=========== ==================================================================================

Default mix (weights of lines): zeros 0.20, small_int 0.30, int16 0.15, pointer 0.15, double
0.10, text 0.10. It follows the observation that main-memory data is dominated by zeros and
narrow values (Alameldeen and Wood, TR-1500, 2004; Pekhimenko et al., PACT 2012, "base-delta-
immediate"); the exact weights are our assumption, stated once and not tuned afterwards.

Real bytes (``package_lines``): 64 B lines taken at evenly spaced offsets from the files of an
installed package (sorted by path, ``__pycache__`` skipped), filtered by suffix, e.g. numpy's
shared libraries (``.so``) or its Python sources (``.py``). Deterministic for one installed
version of that package.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import LINE_BYTES

KINDS = ("zeros", "small_int", "int16", "pointer", "double", "text")
DEFAULT_MIX: dict[str, float] = {
    "zeros": 0.20,
    "small_int": 0.30,
    "int16": 0.15,
    "pointer": 0.15,
    "double": 0.10,
    "text": 0.10,
}

# Relative frequencies of English letters (percent), with space and punctuation added.
_LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
_LETTER_PCT = [
    12.7,
    9.1,
    8.2,
    7.5,
    7.0,
    6.7,
    6.3,
    6.1,
    6.0,
    4.3,
    4.0,
    2.8,
    2.8,
    2.4,
    2.4,
    2.2,
    2.0,
    2.0,
    1.9,
    1.5,
    1.0,
    0.8,
    0.15,
    0.15,
    0.1,
    0.07,
]
_TEXT_CHARS = np.frombuffer((_LETTERS + " .,E").encode(), dtype=np.uint8)
_TEXT_P = np.array([*_LETTER_PCT, 18.0, 1.0, 1.0, 1.0])
_TEXT_P = _TEXT_P / _TEXT_P.sum()


def _as_bytes(values: NDArray[np.generic], n: int) -> NDArray[np.uint8]:
    return np.ascontiguousarray(values).view(np.uint8).reshape(n, LINE_BYTES)


def generate_kind(kind: str, n: int, rng: np.random.Generator) -> NDArray[np.uint8]:
    """``n`` lines of one synthetic kind (see the module table)."""
    if kind == "zeros":
        return np.zeros((n, LINE_BYTES), dtype=np.uint8)
    if kind == "small_int":
        return _as_bytes(rng.integers(-128, 256, (n, 16)).astype("<i4"), n)
    if kind == "int16":
        mag = rng.integers(256, 32768, (n, 16))
        return _as_bytes(np.where(rng.random((n, 16)) < 0.25, -mag, mag).astype("<i4"), n)
    if kind == "pointer":
        region = (0x7F << 40) | (rng.integers(0, 1 << 24, (n, 1)) << 16)
        offset = rng.integers(0, 1 << 12, (n, 8)) << 4
        return _as_bytes((region + offset).astype("<u8"), n)
    if kind == "double":
        return _as_bytes(rng.normal(0.0, 100.0, (n, 8)).astype("<f8"), n)
    if kind == "text":
        return rng.choice(_TEXT_CHARS, size=(n, LINE_BYTES), p=_TEXT_P).astype(np.uint8)
    raise ConfigError(
        f"unknown content kind {kind!r}, expected one of {list(KINDS)}", field="content.kind"
    )


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """Validate a mix (kind -> weight >= 0, some > 0) and return it normalized."""
    for kind, w in mix.items():
        if kind not in KINDS:
            raise ConfigError(
                f"unknown content kind {kind!r}, expected one of {list(KINDS)}", field="content.mix"
            )
        if not w >= 0:
            raise ConfigError(
                f"weight {w!r} of {kind!r}, expected a number >= 0", field="content.mix"
            )
    total = float(sum(mix.values()))
    if total <= 0:
        raise ConfigError(
            f"weights {dict(mix)!r} sum to {total}, expected a positive sum", field="content.mix"
        )
    return {k: float(w) / total for k, w in mix.items()}


def generate_mix(
    n: int, mix: Mapping[str, float] | None = None, seed: int = 0
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """``n`` lines drawn from a mix; returns the lines and each line's kind index in ``KINDS``."""
    weights = check_mix(DEFAULT_MIX if mix is None else mix)
    rng = np.random.default_rng(seed)
    kinds = np.array([KINDS.index(k) for k in weights])
    which = kinds[rng.choice(len(kinds), size=n, p=np.array(list(weights.values())))]
    lines = np.zeros((n, LINE_BYTES), dtype=np.uint8)
    for k in np.unique(which):
        sel = which == k
        lines[sel] = generate_kind(KINDS[k], int(sel.sum()), rng)
    return lines, which


def package_files(package: str, suffixes: tuple[str, ...]) -> list[Path]:
    """Files of an installed package with one of ``suffixes``, sorted, ``__pycache__`` skipped."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # a dotted name whose parent package is not installed
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"package {package!r} is not installed as a package directory", field="content.package"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    files = [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.suffix in suffixes
        and "__pycache__" not in p.parts
        and p.stat().st_size >= LINE_BYTES
    ]
    if not files:
        raise ConfigError(
            f"package {package!r} has no files ending in {list(suffixes)} of 64 B or more",
            field="content.suffixes",
        )
    return files


def package_lines(
    n: int, package: str = "numpy", suffixes: tuple[str, ...] = (".so",)
) -> NDArray[np.uint8]:
    """``n`` real 64 B lines at evenly spaced, line-aligned offsets through a package's files."""
    files = package_files(package, suffixes)
    sizes = np.array([(f.stat().st_size // LINE_BYTES) for f in files], dtype=np.int64)
    ends = np.cumsum(sizes)
    picks = np.linspace(0, ends[-1] - 1, num=n).astype(np.int64)
    which = np.searchsorted(ends, picks, side="right")
    out = np.zeros((n, LINE_BYTES), dtype=np.uint8)
    for f_idx in np.unique(which):
        rows = np.nonzero(which == f_idx)[0]
        first = ends[f_idx] - sizes[f_idx]
        with open(files[f_idx], "rb") as fh:
            for r in rows:
                fh.seek(int(picks[r] - first) * LINE_BYTES)
                out[r] = np.frombuffer(fh.read(LINE_BYTES), dtype=np.uint8)
    return out


def content_lines(source: str, n: int, seed: int = 0) -> NDArray[np.uint8]:
    """Lines from a named source: ``mix`` (the default mix), a kind name, or ``files:PKG:.ext,.ext``."""
    if source == "mix":
        return generate_mix(n, seed=seed)[0]
    if source in KINDS:
        return generate_kind(source, n, np.random.default_rng(seed))
    if source.startswith("files"):
        parts = source.split(":")
        package = parts[1] if len(parts) > 1 and parts[1] else "numpy"
        suffixes = tuple(parts[2].split(",")) if len(parts) > 2 and parts[2] else (".so",)
        return package_lines(n, package, suffixes)
    raise ConfigError(
        f"unknown content source {source!r}, expected 'mix', one of {list(KINDS)} or 'files:PKG:.ext'",
        field="content.source",
    )
