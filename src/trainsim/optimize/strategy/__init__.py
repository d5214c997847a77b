"""The parallelization-strategy search (DESIGN.md, optimize layer: "parallelization and
cluster-design search"; docs/strategy.md): :mod:`.space` enumerates, :mod:`.estimate` and
:mod:`.comm` price a step in closed form, :mod:`.subplatform` places a job on the first GPUs
of a larger platform, :mod:`.search` prunes by memory, ranks and simulates the best."""
