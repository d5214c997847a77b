"""Symmetry shortcuts of the system layer (DESIGN.md, "Speed": symmetry first): ranks that
would do the same thing at the same time are simulated once, exactly.

- ``collective``: a whole-machine collective by one representative rank, with memoized phases
  (``SymmetricRunner``); what a backend's declared symmetry class allows (``network/protocol``);
- ``group``: a communicator-group collective by one representative member;
- ``whole_step``: the whole step by rank 0 when every rank runs the same graph;
- ``replica``: a generated workload by one data-parallel replica, with tensor-parallel mirrors;
- ``partial``: the platform conditions under which part of the ranks may stand for all
  (shared memory tiers, pricers of concurrent groups), checked by ``replica`` and by the
  equivalence folding of ``equivalence``.

Each sits beside the collective runtime and uses its public methods only (``symmetric_ok``,
``run_symmetric``, ``members_idle``, ``symmetric_runner``, ``finish_symmetric``, ...). Nothing
is imported here, so that importing one shortcut does not load the others.
"""
