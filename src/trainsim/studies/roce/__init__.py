"""The HOTI'22 RoCE study (studies layer; docs/roce.md): does RDMA congestion control change
the time of training traffic on a packet-level fabric?

- ``study``: each scheme against PFC only on collectives, an incast and generated training
  steps, one store row per (experiment, size, scheme) so an interrupted study resumes
  (``trainsim study roce``);
- ``micro``: the DCQCN, TIMELY and HPCC papers' micro-benchmarks set up on the packet
  backend, beside the numbers those papers published.
"""
