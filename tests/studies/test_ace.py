"""The ACE study's inputs (``studies.ace``, ``bench/ace.py``, docs/ace.md): ASTRA-sim 1.0's
text workloads replay their recorded compute on the torus platform, and their gradient sizes are
the zoo's ResNet-50 weights at 4 bytes each (the source of the bench's ``--grad-bytes 4``)."""

from __future__ import annotations

from pathlib import Path

from trainsim.studies.ace import run
from trainsim.workload.astra_text.loop import text_to_graphs
from trainsim.workload.astra_text.parse import parse_text, parse_text_workload
from trainsim.workload.models.layered import resnet

TEXT_DIR = Path(__file__).resolve().parents[2] / "reference-data/reference-workloads/astra-sim-1.0-text"

TWO_LAYERS = """DATA
2
l0 -1 1000 NONE 0 2000 NONE 0 3000 ALLREDUCE 65536 1
l1 -1 4000 NONE 0 5000 NONE 0 6000 ALLREDUCE 65536 1
"""


def test_text_workload_keeps_its_compute_only_with_the_roofline_off():
    """Recorded cycles are nanoseconds at ASTRA-sim 1.0's 1 GHz. DATA mode: forward of both
    layers, then weight-gradient and input-gradient per layer from the top, the first layer
    without an input gradient: 1000 + 4000 + 6000 + 5000 + 3000 = 19,000 ns of compute. Under the
    roofline a text node (no FLOPs, no bytes) takes no time."""
    graphs = text_to_graphs(parse_text(TWO_LAYERS), 64, dim_sizes=[4, 4, 4])
    replayed = run(graphs, {"model": "ideal"}, roofline=False).result.ranks[0]
    assert replayed.compute_s * 1e9 == 19_000
    rooflined = run(graphs, {"model": "ideal"}).result.ranks[0]
    assert rooflined.compute_s == 0.0


def test_astra_sim_resnet50_all_reduces_fp32_weights():
    """ASTRA-sim 1.0's ResNet-50 all-reduces 102,011,648 B per step: the zoo's ResNet-50
    (25,557,032 parameters, torchvision's count) less its batch-norm scale and shift (2 per
    output channel of each of the 53 convolutions: 53,120) and the classifier's 1000 biases,
    at 4 bytes each."""
    wl = parse_text_workload(TEXT_DIR / "Resnet50_DataParallel.txt")
    total = sum(layer.wg.nbytes for layer in wl.layers)
    model = resnet(50)
    batch_norm = 2 * 64  # the stem
    cin = 64
    for stage, count in enumerate((3, 4, 6, 3)):
        width = 64 * 2**stage
        for i in range(count):
            batch_norm += 2 * (width + width + 4 * width) + (2 * 4 * width if i == 0 else 0)
        cin = 4 * width
    assert cin == 2048 and batch_norm == 53_120
    assert total == 102_011_648 == 4 * (model.total_params() - batch_norm - 1000)
