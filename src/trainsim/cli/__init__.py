"""Command line: the only layer that prints, parses arguments or exits (DESIGN.md, cli).

Importing it sets the process's BLAS thread pools to one thread unless the user set them:
trainsim's numpy work is on small arrays, and a sweep's parallelism is its worker processes
(which inherit the setting). A pool started with numpy costs each process about 50 ms of CPU on
2 cores for nothing (a quarter of a 256-rank `trainsim run`) and oversubscribes a sweep's
cores. It must run before anything imports numpy, so it lives here, ahead of every command
module.
"""

import os

for _pool in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")
