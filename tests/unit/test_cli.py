from __future__ import annotations

from pathlib import Path

import pytest
from evalsvc.core.errors import DomainError
from evalsvc_tools.commands.operator import read_jsonl_pairs


def test_jsonl_rows_are_read_in_order_skipping_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"input": "a", "output": "b", "extra": 1}\n\n{"input": "c", "output": "d"}\n')
    assert read_jsonl_pairs(path) == [("a", "b"), ("c", "d")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{nope", "rows.jsonl:2: not valid JSON"),
        ("[1, 2]", "rows.jsonl:2: expected an object"),
        ('{"input": 5, "output": "x"}', "rows.jsonl:2: 'input' must be a string"),
        ('{"input": "x"}', "rows.jsonl:2: 'output' must be a string"),
    ],
)
def test_bad_lines_are_reported_with_their_number(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"input": "ok", "output": "ok"}\n' + line + "\n")
    with pytest.raises(DomainError, match=message.replace("[", r"\[")):
        read_jsonl_pairs(path)
