"""A plain clone tests everything: the reference data live in the repository (reference-data/),
and no test, helper, benchmark or example reaches for ../shared beside the checkout."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.reference_data import REFERENCE_DATA, RESULTS, WORKLOADS

ROOT = REFERENCE_DATA.parent
# a path built to ../shared: `/ "shared"`, the old TRAINSIM_SHARED override, or "../shared/"
OUTSIDE = re.compile(r"""/\s*["']shared["']|TRAINSIM_SHARED|\.\./shared/""")


def test_the_reference_data_and_their_licences_are_in_the_repository():
    for path in (
        REFERENCE_DATA / "README.md",
        RESULTS / "cases.json",
        RESULTS / "README.md",
        WORKLOADS / "README.md",
        WORKLOADS / "libra" / "LICENSE",
        REFERENCE_DATA / "LICENSES" / "astra-sim-518bd51.txt",
        REFERENCE_DATA / "LICENSES" / "astra-sim-1.0.txt",
        REFERENCE_DATA / "LICENSES" / "chakra-21585d8.md",
    ):
        assert path.is_file(), path


def test_no_code_reaches_outside_the_checkout_for_data():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("src", "tests", "bench", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []
