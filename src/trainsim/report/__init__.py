"""Results people can look at: breakdowns, Perfetto timelines, plots and an HTML report
(DESIGN.md, report layer)."""
