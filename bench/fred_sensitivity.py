"""How the FRED study's end-to-end speed-up (FRED-D over the mesh) moves with the assumptions
the paper does not state here (docs/fred.md, "Sensitivity"): batch per NPU, overlap of the
gradient reduction with the backward pass, the NPU's FLOP rate (``system.compute_scale``),
the tensor-parallel degree, and weight streaming per step or per micro-batch. Every step is
simulated (``studies/fred/step.py``: ``system.api.simulate`` with the wafer pricer); the
exposed fraction is the mesh step not covered by rank 0's compute, and ``needed`` the fraction
of the mesh step FRED-D would have to remove entirely for the paper's speed-up (1 - 1/S);
``bound`` the speed-up of a fabric that removed all of the mesh's exposed part, 1 / (1 - exposed).

Run: PYTHONPATH=src python bench/fred_sensitivity.py
"""

from __future__ import annotations

import time
from dataclasses import replace

from trainsim.studies.fred import study
from trainsim.studies.fred.step import step_time
from trainsim.studies.fred.workloads import WORKLOADS, Workload


def _variants(w: Workload) -> list[tuple[str, Workload, float, bool]]:
    """(label, workload, compute_scale, stream per micro-batch)."""
    par = w.parallelism
    out = [("as shipped", w, 1.0, False)]
    out.append(("batch per NPU x4", replace(w, parallelism=replace(par, micro_batch=4 * par.micro_batch, global_batch=4 * par.global_batch)), 1.0, False))
    if not w.streaming and par.dp > 1:
        out.append(("gradient reduce overlapped", replace(w, parallelism=replace(par, overlap_grad_reduce=True)), 1.0, False))
    out.append(("NPU 4x the FLOP rate", w, 0.25, False))
    if par.tp == 2 and par.pp == 2:
        out.append(("TP 4 x PP 1 x DP 5", replace(w, parallelism=replace(par, tp=4, pp=1)), 1.0, False))
    if w.streaming and par.pp > 1:
        out.append(("weights streamed per micro-batch", w, 1.0, True))
    return out


def main() -> None:
    t0 = time.process_time()
    nets = study.load_nets()
    print(f"{'workload':16} {'assumption':34} {'mesh s':>9} {'FRED-D s':>9} {'speed-up':>8} {'exposed':>8} {'bound':>6} {'paper':>6} {'needed':>6}")
    for w in WORKLOADS:
        if w.name == "Transformer-1T":
            continue  # DP 20, 1 sequence per NPU: the same story as ResNet-152 with streaming
        for label, v, scale, per_mb in _variants(w):
            work = v.generate()
            mb = max(1, int(work.info.get("microbatches", 1)))
            steps = {}
            for name in ("mesh", "fred_d"):
                net = nets[name]
                assert net.platform is not None
                platform = replace(net.platform, system=replace(net.platform.system, compute_scale=scale))
                steps[name] = step_time(work, v.parallelism, net, platform, streaming=v.streaming, layers=v.layers, stream_passes=mb if per_mb else 1)
            mesh, fred = steps["mesh"], steps["fred_d"]
            print(f"{w.name:16} {label:34} {mesh.step_s:9.4g} {fred.step_s:9.4g} {mesh.step_s / fred.step_s:7.3f}x "
                  f"{mesh.exposed_comm_s / mesh.step_s:8.1%} {mesh.step_s / (mesh.step_s - mesh.exposed_comm_s):5.2f}x {w.paper_speedup:5.2f}x {1 - 1 / w.paper_speedup:6.1%}", flush=True)
    print(f"cpu {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
