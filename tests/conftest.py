"""Suite-wide settings: property tests draw the same examples on every run (derandomized), so
CI cannot turn red or green by chance; `HYPOTHESIS_PROFILE=explore` draws fresh random examples
when hunting for counterexamples locally."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
