"""Where the tests find ASTRA-sim's inputs and results and the public workload files: the
repository's own ``reference-data/`` (copied from ../shared; origins and licences in its
README). Nothing here looks outside the checkout, so a plain clone runs every test, and a
missing file is a failure, never a skip."""

from __future__ import annotations

from pathlib import Path

REFERENCE_DATA = Path(__file__).resolve().parents[2] / "reference-data"
RESULTS = REFERENCE_DATA / "reference-results"
"""What ASTRA-sim computed (cases.json, extra/) and the inputs it ran (inputs/)."""
WORKLOADS = REFERENCE_DATA / "reference-workloads"
"""Public Chakra ET files, ASTRA-sim configs and text workloads, LIBRA's inputs."""
