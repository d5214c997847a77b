"""`trainsim schema`: print the JSON Schema of the native platform file (cli layer).

Editors use it to check and complete ``platform.yaml`` files, e.g. with the YAML language
server's ``# yaml-language-server: $schema=platform.schema.json`` comment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_file
from trainsim.cli.writes import write_output


@app.command("schema")
def schema(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the schema to this file.")
    ] = None,
) -> None:
    """Print the JSON Schema of trainsim's native platform YAML."""
    from trainsim.config.platform import platform_json_schema

    check_output_file(out, "--out")
    text = json.dumps(platform_json_schema(), indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        write_output(out, text, "--out")
