"""`evalsvc push` with E10's pair fields: `reference` and `contexts` read from JSON Lines and
CSV (contexts a JSON array in its cell), checked against the service's limits with each bad row
named by its line, and sent as they were read."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalsvc.models.datasets import MAX_CONTEXT_CHARS, MAX_CONTEXTS, MAX_REFERENCE_CHARS
from evalsvc_tools.pair_files import BadFile, read_pairs

from tests.unit.test_cli_user import EMOJI, Scripted, as_json, lines, run, service, write

__all__ = ["service"]  # the scripted server fixture, used by name


def test_json_lines_carry_reference_and_contexts_as_written(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        lines(
            {"id": "q1", "input": "a", "output": "b", "reference": "B", "contexts": ["c1", "c2"]},
            {"input": "c", "output": "d", "reference": "", "contexts": []},
            {"input": "e", "output": "f", "reference": None, "contexts": None},
        ),
    )

    assert read_pairs(path) == [
        {"id": "q1", "input": "a", "output": "b", "reference": "B", "contexts": ["c1", "c2"]},
        {"input": "c", "output": "d", "reference": "", "contexts": []},
        {"input": "e", "output": "f"},
    ]


def test_csv_reference_and_contexts_columns(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.csv",
        "id,input,output,Reference,contexts\n"
        'q1,a,b,"The answer, in full.","[""first, with a comma"", ""second""]"\n'
        "q2,c,d,,\n"  # empty cells: neither field
        'q3,e,f,,"[]"\n'  # an empty array: no context retrieved
        f'q4,g,h,{EMOJI},"[""{EMOJI}""]"\n',
    )

    assert read_pairs(path) == [
        {
            "id": "q1",
            "input": "a",
            "output": "b",
            "reference": "The answer, in full.",
            "contexts": ["first, with a comma", "second"],
        },
        {"id": "q2", "input": "c", "output": "d"},
        {"id": "q3", "input": "e", "output": "f", "contexts": []},
        {"id": "q4", "input": "g", "output": "h", "reference": EMOJI, "contexts": [EMOJI]},
    ]


def test_every_bad_reference_or_contexts_is_reported_by_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        lines(
            {"input": "x", "output": "y", "reference": 5},  # 1
            {"input": "x", "output": "y", "reference": "r" * (MAX_REFERENCE_CHARS + 1)},  # 2
            {"input": "x", "output": "y", "contexts": "one"},  # 3
            {"input": "x", "output": "y", "contexts": ["a", 2]},  # 4
            {"input": "x", "output": "y", "contexts": ["c"] * (MAX_CONTEXTS + 1)},  # 5
            {"input": "x", "output": "y", "contexts": ["a", ""]},  # 6
            {"input": "x", "output": "y", "contexts": ["c" * (MAX_CONTEXT_CHARS + 1)]},  # 7
            {"input": "fine", "output": "fine", "reference": "r", "contexts": ["c"]},  # 8
        ),
    )

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    name = str(path)
    assert caught.value.problems == [
        f"{name}:1: reference must be a string",
        f"{name}:2: reference has {MAX_REFERENCE_CHARS + 1:,} characters, over the limit of "
        f"{MAX_REFERENCE_CHARS:,}",
        f"{name}:3: contexts must be a list of strings",
        f"{name}:4: contexts must be a list of strings",
        f"{name}:5: {MAX_CONTEXTS + 1} contexts, over the limit of {MAX_CONTEXTS}",
        f"{name}:6: context 2 is empty",
        f"{name}:7: context 1 has {MAX_CONTEXT_CHARS + 1:,} characters, over the limit of "
        f"{MAX_CONTEXT_CHARS:,}",
    ]
    assert caught.value.bad_rows == 7


def test_a_csv_contexts_cell_that_is_not_a_json_array_of_strings_names_its_row(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "pairs.csv",
        "input,output,contexts\n"
        "a,b,just text\n"  # 2
        'a,b,"[""unclosed"\n'  # 3
        'a,b,"{""a"": 1}"\n'  # 4
        'a,b,"[1, 2]"\n'  # 5
        'a,b,"[""""]"\n'  # 6: an empty context
        'a,b,"[""fine""]"\n',  # 7
    )

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    problems = caught.value.problems
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in problems] == ["2", "3", "4", "5", "6"]
    array = 'contexts must be a JSON array of strings in its cell, like ["first", "second"]'
    assert problems[0].endswith(f"{array} (not valid JSON: Expecting value)")
    assert array in problems[1] and "not valid JSON" in problems[1]
    assert problems[2].endswith(array)
    assert problems[3].endswith("contexts must be a list of strings")
    assert problems[4].endswith("context 1 is empty")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_4_byte_characters_count_as_one_up_to_the_limits(tmp_path: Path, suffix: str) -> None:
    reference = EMOJI * MAX_REFERENCE_CHARS
    contexts = [EMOJI * MAX_CONTEXT_CHARS] * MAX_CONTEXTS
    pair = {"input": "i", "output": "o", "reference": reference, "contexts": contexts}
    if suffix == ".csv":
        cell = '"[' + ",".join(f'""{c}""' for c in contexts) + ']"'
        path = write(
            tmp_path / "pairs.csv", f"input,output,reference,contexts\ni,o,{reference},{cell}\n"
        )
    else:
        path = write(tmp_path / "pairs.jsonl", lines(pair))

    assert read_pairs(path) == [pair]


def test_push_sends_reference_and_contexts(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/data/seed/rag", as_json(200, {"id": "rag"}))
    path = write(
        tmp_path / "pairs.csv",
        f'input,output,reference,contexts\nq,a,{EMOJI},"[""c1"", ""c2""]"\nq2,a2,,\n',
    )

    assert run(service, "push", str(path), "--seed", "rag") == 0

    (request,) = service.seen
    assert request.json() == {
        "data": [
            {"input": "q", "output": "a", "reference": EMOJI, "contexts": ["c1", "c2"]},
            {"input": "q2", "output": "a2"},
        ]
    }
    assert "wrote 2 pairs to seed dataset rag" in capsys.readouterr().out
