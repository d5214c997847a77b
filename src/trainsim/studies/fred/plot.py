"""Pictures of the wafer fabrics (studies layer; docs/fred.md, ``trainsim study fred
--figures``): every channel of the graph drawn once, its width growing with its bandwidth."""

from __future__ import annotations

from pathlib import Path

from trainsim.config.wafer import MESH
from trainsim.topology.wafer import WaferFabric


def _positions(fab: WaferFabric) -> dict[int, tuple[float, float]]:
    p = fab.params
    pos: dict[int, tuple[float, float]] = {}
    if p.kind == MESH:
        cols, rows = p.cols, p.npus // p.cols
        for r in range(p.npus):
            pos[r] = (float(r % cols), float(-(r // cols)))
        count: dict[int, int] = {}
        for dev, npu in zip(fab.io, fab.io_attach, strict=True):
            x, y = pos[npu]
            k = count.get(npu, 0)
            count[npu] = k + 1
            # outward from the edge the controller sits on (top, bottom, left, right)
            top, bottom, left = y == 0, y == -(rows - 1), x == 0
            dx, dy = (0.0, 0.55) if top and k == 0 else (0.0, -0.55) if bottom and k == 0 else (-0.55, 0.0) if left else (0.55, 0.0)
            pos[dev] = (x + dx, y + dy)
        return pos
    per, l1s = p.per_l1, p.npus // p.per_l1
    width = float(p.npus - 1)
    for r in range(p.npus):
        pos[r] = (float(r), 0.0)
    for k, dev in enumerate(fab.l1):
        pos[dev] = (k * per + (per - 1) / 2, 1.5)
    for i, dev in enumerate(fab.plane):
        pos[dev] = (width * (i + 0.5) / len(fab.plane), 3.2)
    for i, dev in enumerate(fab.io):
        pos[dev] = (width * (i + 0.5) / len(fab.io), 4.6)
    del l1s
    return pos


def draw_fabric(fab: WaferFabric, title: str, path: Path) -> Path:
    """Write a PNG of ``fab`` to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pos = _positions(fab)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    top = max(fab.bandwidth)
    seen = set()
    for a, b, bw, dim in zip(fab.link_src, fab.link_dst, fab.bandwidth, fab.link_dim, strict=True):
        if (b, a) in seen:
            continue
        seen.add((a, b))
        (x0, y0), (x1, y1) = pos[a], pos[b]
        colour = ("tab:blue", "tab:orange", "tab:green")[min(dim, 2)] if dim >= 0 else "grey"
        ax.plot([x0, x1], [y0, y1], color=colour, lw=0.6 + 4.0 * bw / top, alpha=0.7, zorder=1)
    npus = range(fab.npus)
    ax.scatter([pos[r][0] for r in npus], [pos[r][1] for r in npus], s=380, c="white", edgecolors="black", zorder=2)
    for r in npus:
        ax.annotate(str(r), pos[r], ha="center", va="center", fontsize=7, zorder=3)
    switches = list(fab.l1) + list(fab.plane)
    if switches:
        ax.scatter([pos[s][0] for s in switches], [pos[s][1] for s in switches], s=260, marker="s", c="lightgrey", edgecolors="black", zorder=2)
    ax.scatter([pos[d][0] for d in fab.io], [pos[d][1] for d in fab.io], s=70, marker="D", c="tab:red", zorder=2)
    p = fab.params
    if p.kind == MESH:
        legend = f"NPU-NPU {p.npu_link_bw / 1e9:.0f} GB/s (X blue, Y orange), I/O controllers (red) on {p.io_bw / 1e9:.0f} GB/s links (green)"
    else:
        up = p.per_l1 * p.npu_l2_bw / p.planes
        legend = (f"NPU-L1 {p.npu_link_bw / 1e12:.0f} TB/s (blue), L1-plane {up / 1e9:.0f} GB/s (orange), "
                  f"I/O controllers (red) {p.io_bw / 1e9:.0f} GB/s (green){', in-network' if p.in_network else ''}")
    ax.set_title(f"{title}\n{legend}", fontsize=9)
    ax.set_axis_off()
    ax.set_aspect("equal" if p.kind == MESH else "auto")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
