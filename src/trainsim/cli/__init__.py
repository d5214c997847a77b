"""Command line: the only layer that prints, parses arguments or exits (DESIGN.md, cli)."""
