"""The collectives of a result document: every record, written as columns and read back."""

import json
import math

import pytest

from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.errors import ConfigError
from trainsim.report.collectives import COLUMNS, collective_rows, collective_table, rows_of
from trainsim.report.document import dumps

from .test_reference_and_trace import dp_result

NETWORK = NetworkSpec((DimSpec("Ring", 8, 50e9, 500.0),))


def test_columns_written_and_read_back_are_the_rows():
    result = dp_result()
    rows = collective_rows(result, NETWORK)
    table = collective_table(result, NETWORK)
    assert table["rows"] == len(rows) == 3  # 3 all-reduces, 8 identical ranks folded into each
    assert table["records"] == len(result.collectives) == 24
    assert rows_of(json.loads(dumps({"collectives": table}))["collectives"]) == rows
    assert rows_of(rows) is rows  # a document of an earlier version: a list of rows


@pytest.mark.parametrize(
    "section",
    [
        {"rows": 2, "columns": {"rank": [0]}},
        {"rows": 1, "columns": {"rank": 0}},
        {"columns": {"rank": [0]}},
        [1, 2],
        "all",
    ],
)
def test_a_malformed_collectives_section_is_a_config_error(section):
    with pytest.raises(ConfigError, match="collectives"):
        rows_of(section, file="r.json")


def test_dumps_keeps_lists_of_values_on_one_line_and_reads_back():
    document = {"a": [1, 2.5, None], "b": [{"c": [[0.0, 1.0]]}], "d": {}, "e": math.inf, "f": "x"}
    text = dumps(document)
    assert '"a": [1, 2.5, null]' in text and '"c": [[0.0, 1.0]]' in text
    assert json.loads(text) == document


def test_bandwidth_figures_reused_across_records_equal_each_records_own():
    """Rows share the figures of records with the same type, size, group, duration and
    dimensions: each row's figures are exactly its own record's."""
    from trainsim.report.collectives import _bandwidth

    result = dp_result()
    rows = collective_rows(result, NETWORK)
    by_key = {(r.node_id, r.start_ns * 1e-9, r.end_ns * 1e-9): r for r in result.collectives}
    for row in rows:
        own = _bandwidth(by_key[(row["node_id"], row["start_s"], row["end_s"])], NETWORK)
        assert {k: row[k] for k in own} == own


def test_columns_are_the_rows_field_by_field():
    result = dp_result()
    rows = collective_rows(result, NETWORK)
    table = collective_table(result, NETWORK)
    assert table["columns"] == {name: [r[name] for r in rows] for name in table["columns"]}
    assert list(table["columns"]) == list(COLUMNS)


def test_an_empty_run_has_empty_columns():
    from types import SimpleNamespace

    table = collective_table(SimpleNamespace(collectives=[]), NETWORK)
    assert table == {"rows": 0, "records": 0, "columns": {name: [] for name in COLUMNS}}
