"""Registers the command modules on the root app (imported by ``cli.main``)."""

from __future__ import annotations
