"""Digits data, the workers' input patches and the trained MLP that RePurpose restructures.

Place: ``trainsim.studies.repurpose`` (issue 10, RePurpose: Abdi, Rashidi, Fekri, Krishna, arXiv
2008.08289), the bottom of the package: everything else starts from a :class:`DigitsSplit` and
an :class:`MLP`. Nothing is downloaded: the data is scikit-learn's bundled 8x8 digits.

Conventions and units: samples are rows, so a layer maps ``X`` of shape ``(N, n_in)`` to the
pre-activation ``Z = X W^T + b`` of shape ``(N, n_out)``; ``W`` has shape ``(n_out, n_in)`` as in
the paper's ``W x + b``. Pixel intensities are scaled to ``[0, 1]`` (sklearn's 0..16 over 16);
activations and weights carry no physical unit.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from trainsim.errors import ConfigError
from trainsim.extras import require

STUDY = "the RePurpose study"  # what needs scikit-learn, in the error when it is missing
IMAGE_SIDE = 8
N_PIXELS = IMAGE_SIDE * IMAGE_SIDE
N_CLASSES = 10
HIDDEN = (128, 128)


@dataclass(frozen=True)
class DigitsSplit:
    """Calibration (training) and evaluation (test) samples; pixels in ``[0, 1]``."""

    x_train: np.ndarray  # (N_train, 64) float64
    y_train: np.ndarray  # (N_train,) int labels 0..9
    x_test: np.ndarray  # (N_test, 64)
    y_test: np.ndarray  # (N_test,)


def load_split(seed: int, test_fraction: float = 0.3) -> DigitsSplit:
    """The digits set split, stratified, into training and test parts by ``seed``."""
    require("sklearn", STUDY)
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not 0.0 < test_fraction < 1.0:
        raise ConfigError(
            f"{test_fraction!r}: expected a fraction strictly between 0 and 1",
            field="test_fraction",
        )
    x, y = load_digits(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x / 16.0, y, test_size=test_fraction, stratify=y, random_state=seed
    )
    return DigitsSplit(x_tr, y_tr, x_te, y_te)


def validation_split(split: DigitsSplit, seed: int, fraction: float = 0.2) -> DigitsSplit:
    """A split of ``split``'s training part only: ``fraction`` of it, stratified by ``seed``,
    becomes the evaluation part and the rest the training part; the test part is dropped.

    For choosing settings without looking at test accuracy (:mod:`.validation`).
    """
    require("sklearn", STUDY)
    from sklearn.model_selection import train_test_split

    if not 0.0 < fraction < 1.0:
        raise ConfigError(
            f"{fraction!r}: expected a fraction strictly between 0 and 1", field="holdout"
        )
    x_tr, x_va, y_tr, y_va = train_test_split(
        split.x_train, split.y_train, test_size=fraction, stratify=split.y_train, random_state=seed
    )
    return DigitsSplit(x_tr, y_tr, x_va, y_va)


def patch_grid(workers: int) -> tuple[int, int]:
    """Rows and columns of the grid of equal rectangular patches for ``workers`` workers.

    The grid is as square as possible with both sides dividing 8: 2 -> 1x2, 4 -> 2x2, 8 -> 2x4.
    """
    for rows in range(int(np.sqrt(workers)), 0, -1):
        cols, rem = divmod(workers, rows)
        if rem == 0 and IMAGE_SIDE % rows == 0 and IMAGE_SIDE % cols == 0:
            return rows, cols
    raise ConfigError(
        f"{workers!r}: expected a worker count that tiles the 8x8 image into equal patches "
        "(2, 4, 8, 16, 32 or 64)",
        field="workers",
    )


def patch_owners(workers: int) -> np.ndarray:
    """Worker holding each pixel (row-major order), each worker a spatial patch: shape (64,)."""
    if not isinstance(workers, int | np.integer) or workers < 2:
        raise ConfigError(
            f"{workers!r}: expected an integer number of workers >= 2", field="workers"
        )
    rows, cols = patch_grid(int(workers))
    ph, pw = IMAGE_SIDE // rows, IMAGE_SIDE // cols
    r, c = np.divmod(np.arange(N_PIXELS), IMAGE_SIDE)
    return ((r // ph) * cols + (c // pw)).astype(np.int64)


@dataclass(frozen=True)
class MLP:
    """A ReLU multi-layer perceptron: ``weights[l]`` is ``(n_out, n_in)``, ``biases[l]`` ``(n_out,)``.

    The last layer is linear (its outputs are the class logits).
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]

    @property
    def n_layers(self) -> int:
        return len(self.weights)

    def trace(self, x: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Inputs of every layer and their pre-activations for samples ``x`` (rows)."""
        inputs, pre = [], []
        h = x
        for idx, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            inputs.append(h)
            z = h @ w.T + b
            pre.append(z)
            h = np.maximum(z, 0.0) if idx < self.n_layers - 1 else z
        return inputs, pre

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self.trace(x)[1][-1]

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Fraction of samples whose largest logit is the label (0..1)."""
        return float(np.mean(np.argmax(self.logits(x), axis=1) == y))


def train_mlp(
    split: DigitsSplit, seed: int, hidden: tuple[int, ...] = HIDDEN, max_iter: int = 300
) -> MLP:
    """Train the MLP to be restructured (Adam, sklearn's MLPClassifier), deterministic in ``seed``."""
    require("sklearn", STUDY)
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(
        hidden_layer_sizes=hidden,
        activation="relu",
        alpha=1e-4,
        max_iter=max_iter,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(split.x_train, split.y_train)
    if list(clf.classes_) != list(range(N_CLASSES)):
        raise ConfigError(
            f"training split holds classes {list(clf.classes_)}: expected all of 0..9", field="seed"
        )
    return MLP(
        weights=tuple(np.ascontiguousarray(w.T) for w in clf.coefs_),
        biases=tuple(np.array(b) for b in clf.intercepts_),
    )
