"""Studies: research built on the simulator, not part of it (DESIGN.md, "Layers": beside
``optimize``, ``sweep`` and ``report``, above ``system``; imports point down only).

- ``studies.repurpose``: RePurpose, restructuring a trained network for distributed inference,
  its latency simulated on native platforms (docs/repurpose.md);
- ``studies.pcm``: the tri-level MLC phase-change memory study: scheme comparisons, sweeps,
  calibration and the gap diagnosis, on the device model in ``memory.pcm`` (docs/pcm.md);
- ``studies.ace``: the baseline endpoint against ACE and the ideal one, with the best-baseline
  search (docs/ace.md; ``bench/ace.py`` prints its table).
- ``studies.roce``: the HOTI'22 RoCE study (each congestion-control scheme against PFC only on
  the packet backend) and the DCQCN / HPCC papers' micro-benchmarks (docs/roce.md).

The CLI runs them (``trainsim repurpose``, ``trainsim pcm``).
"""
