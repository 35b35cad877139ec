"""`evalsvc push` with E11's pair fields: messages, tool calls, expected tool calls and a
conversation id read from JSON Lines as written, checked by the service's own models with each
bad row named by its line; a CSV column of one of them is refused (JSON Lines only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalsvc_tools.pair_files import BadFile, read_pairs

from tests.unit.test_cli_user import lines, write

AGENT = {
    "id": "a1",
    "input": "book",
    "output": "booked",
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "😀"}],
    "tool_calls": [{"name": "book", "arguments": {"b": 1, "a": {"x": [True]}}}],
    "expected_tool_calls": [],
    "conversation_id": "c-1",
}


def test_json_lines_carry_the_conversation_fields_as_written(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        lines(AGENT, {"input": "c", "output": "d", "messages": None, "tool_calls": None}),
    )

    assert read_pairs(path) == [AGENT, {"input": "c", "output": "d"}]


def test_every_bad_conversation_field_is_reported_by_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        lines(
            {"input": "a", "output": "b", "messages": [{"role": "robot", "content": "x"}]},
            {"input": "a", "output": "b", "tool_calls": [{"name": "", "arguments": {}}]},
            {"input": "a", "output": "b", "expected_tool_calls": [{"name": "t", "arguments": 1}]},
            {"input": "a", "output": "b", "conversation_id": "c" * 129},
            AGENT,
        ),
    )

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    problems = caught.value.problems
    assert caught.value.bad_rows == 4
    assert any(
        p.endswith(":1: messages[0].role: Input should be 'system', 'user', 'assistant' or 'tool'")
        for p in problems
    ), problems
    assert any(
        ":2: tool_calls[0].name: String should have at least 1 character" in p for p in problems
    ), problems
    assert any(":3: expected_tool_calls[0].arguments:" in p for p in problems), problems
    assert any(
        ":4: conversation_id: String should have at most 128 characters" in p for p in problems
    ), problems


def test_a_csv_column_of_a_conversation_field_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "pairs.csv", "input,output,tool_calls\na,b,[]\n")

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    assert "tool_calls is read from JSON Lines only" in caught.value.problems[0]
