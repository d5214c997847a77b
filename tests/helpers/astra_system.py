"""A minimal ASTRA-sim system JSON (as a dict) and network YAML for tests that write their own
inputs: a 4-rank ring at 50 GB/s and 500 ns per hop, endpoint delay 10 ns, 4 chunks,
localBWAware, local-mem-bw 1600 GB/s, ring all-reduce."""

SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4,
    "all-reduce-implementation": ["ring"],
    "collective-optimization": "localBWAware",
    "local-mem-bw": 1600,
}
NETWORK = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
