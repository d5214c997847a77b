"""Non-LLM models of the Themis/ACE/FRED papers as layer lists: ResNet-50/152, GNMT, DLRM
(DESIGN.md, workload layer: generators).

A :class:`LayeredModel` is a sequence of :class:`Layer`, each with its forward FLOPs and
activation traffic per sample, its parameter count and a representative GEMM shape (convolutions
as implicit GEMMs: m = output pixels, n = output channels, k = in_channels x kernel^2). Counts
are computed from the architecture, not copied: ResNet v1.5 (He et al. 2016, Table 1; torchvision
layout, stride on the 3x3), GNMT as in MLPerf Training (Wu et al. 2016: 4+4 LSTM layers of 1024,
bidirectional first encoder layer, attention, 32,320-token vocabulary), DLRM as in Naumov et al.
2019 for Criteo Terabyte (bottom MLP 13-512-256-128, 26 tables of dimension 128, dot
interaction, top MLP 479-1024-1024-512-256-1).

Units: FLOP and elements per sample; parameters as counts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    name: str
    flops: float  # forward FLOP per sample (an embedding: one per element looked up)
    act_elems: float  # activation elements read + written per sample (forward)
    params: int
    m_per_sample: int  # GEMM rows contributed by one sample (pixels or tokens)
    n: int
    k: int
    kind: str = "gemm"  # the operator kind the timer prices it as ("embedding": memory-bound)


@dataclass(frozen=True)
class Embeddings:
    """DLRM sparse features: ``tables`` tables of ``rows`` x ``dim``, ``pooling`` lookups per
    table per sample; sharded table-wise over the ranks (model parallel)."""

    tables: int
    rows: int
    dim: int
    pooling: int = 1
    elem_bytes: int = 4  # fp32 tables


@dataclass(frozen=True)
class LayeredModel:
    name: str
    layers: tuple[Layer, ...]
    default_batch: int  # per-rank samples per step in the papers' set-ups
    embeddings: Embeddings | None = None
    bottom_layers: int = 0  # DLRM: layers before the interaction (run before the all-to-all)
    elem_bytes: int = 2  # bytes per activation / parameter element (mixed precision)

    def total_params(self) -> int:
        emb = self.embeddings
        return sum(x.params for x in self.layers) + (emb.tables * emb.rows * emb.dim if emb else 0)


def _conv(name: str, cin: int, cout: int, k: int, stride: int, hw_in: int) -> tuple[Layer, int]:
    hw = hw_in // stride
    pixels = hw * hw
    layer = Layer(
        name,
        flops=2.0 * pixels * cout * cin * k * k,
        act_elems=float(hw_in * hw_in * cin + pixels * cout),
        params=k * k * cin * cout + 2 * cout,  # + batch-norm scale and shift
        m_per_sample=pixels,
        n=cout,
        k=cin * k * k,
    )
    return layer, hw


def _merge(name: str, parts: list[Layer]) -> Layer:
    big = max(parts, key=lambda x: x.flops)
    return Layer(
        name,
        flops=sum(x.flops for x in parts),
        act_elems=sum(x.act_elems for x in parts),
        params=sum(x.params for x in parts),
        m_per_sample=big.m_per_sample,
        n=big.n,
        k=big.k,
    )


_RESNET_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def resnet(depth: int, *, image: int = 224, classes: int = 1000, batch: int = 32) -> LayeredModel:
    """ResNet-50/101/152 v1.5 with one layer per bottleneck block (plus stem and classifier)."""
    blocks = _RESNET_BLOCKS[depth]
    layers: list[Layer] = []
    stem, hw = _conv("conv1", 3, 64, 7, 2, image)
    layers.append(stem)
    hw //= 2  # 3x3 max-pool, stride 2
    cin = 64
    for stage, count in enumerate(blocks):
        width = 64 * 2**stage
        for i in range(count):
            stride = 2 if (i == 0 and stage > 0) else 1
            a, hw1 = _conv("a", cin, width, 1, 1, hw)
            b, hw2 = _conv("b", width, width, 3, stride, hw1)
            c, _ = _conv("c", width, 4 * width, 1, 1, hw2)
            parts = [a, b, c]
            if i == 0:
                parts.append(_conv("proj", cin, 4 * width, 1, stride, hw)[0])
            layers.append(_merge(f"layer{stage + 1}.{i}", parts))
            cin, hw = 4 * width, hw2
    layers.append(Layer("fc", 2.0 * cin * classes, float(cin + classes), cin * classes + classes, 1, classes, cin))
    return LayeredModel(f"resnet{depth}", tuple(layers), default_batch=batch)


def _lstm(name: str, inp: int, hidden: int, steps: int, directions: int = 1) -> Layer:
    params = directions * 4 * hidden * (inp + hidden + 1)
    return Layer(name, 2.0 * steps * (params - directions * 4 * hidden), float(steps * (inp + directions * hidden) * 5), params, steps, 4 * hidden, inp + hidden)


def gnmt(*, hidden: int = 1024, vocab: int = 32320, src_len: int = 50, tgt_len: int = 50, batch: int = 128) -> LayeredModel:
    """GNMT (MLPerf Training reference): per sample ``src_len`` source and ``tgt_len`` target
    tokens."""
    h = hidden
    layers = [
        Layer("enc_embedding", float(src_len * h), float(src_len * h), vocab * h, src_len, h, 1, "embedding"),
        _lstm("enc_lstm0_bi", h, h // 2, src_len, directions=2),
        _lstm("enc_lstm1", h, h, src_len),
        _lstm("enc_lstm2", h, h, src_len),
        _lstm("enc_lstm3", h, h, src_len),
        Layer("dec_embedding", float(tgt_len * h), float(tgt_len * h), vocab * h, tgt_len, h, 1, "embedding"),
        Layer("attention", 2.0 * tgt_len * (h * h + 2 * src_len * h), float(tgt_len * src_len + 2 * tgt_len * h), 2 * h * h + h, tgt_len, src_len, h),
        *[_lstm(f"dec_lstm{i}", 2 * h, h, tgt_len) for i in range(4)],
        Layer("classifier", 2.0 * tgt_len * h * vocab, float(tgt_len * (h + 2 * vocab)), h * vocab + vocab, tgt_len, vocab, h),
    ]
    return LayeredModel("gnmt", tuple(layers), default_batch=batch)


def _mlp(prefix: str, sizes: list[int]) -> list[Layer]:
    return [
        Layer(f"{prefix}{i}", 2.0 * a * b, float(a + b), a * b + b, 1, b, a)
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=False))
    ]


def dlrm(*, tables: int = 26, rows: int = 4_000_000, dim: int = 128, dense: int = 13, batch: int = 2048) -> LayeredModel:
    """DLRM (Naumov et al. 2019, Criteo Terabyte configuration). ``rows`` is the rows per table
    (an assumption: the real tables range from tens to ~40M rows after hashing)."""
    bottom = _mlp("bottom_mlp", [dense, 512, 256, dim])
    features = tables + 1
    interact = features * (features - 1) // 2 + dim
    top = _mlp("top_mlp", [interact, 1024, 1024, 512, 256, 1])
    inter = Layer("interaction", 2.0 * features * features * dim, float(features * dim + interact), 0, features, features, dim)
    return LayeredModel(
        "dlrm",
        tuple([*bottom, inter, *top]),
        default_batch=batch,
        embeddings=Embeddings(tables, rows, dim),
        bottom_layers=len(bottom),
    )
