"""The FRED study (issue 20, docs/fred.md): a wafer-scale 2-D mesh against FRED's switch fabric
(Rashidi et al., arXiv 2406.19580), built on the wafer fabrics (``topology/wafer.py``), the
in-network flow backend and the wafer collectives. ``fabrics.py`` runs collectives and I/O
streams on a fabric, ``step.py`` prices a generated training step, ``study.py`` the tables."""
