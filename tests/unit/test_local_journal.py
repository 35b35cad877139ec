"""The embedded store's journal and snapshot files (tools/evalsvc_tools/local/journal.py)."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from evalsvc_tools.local import journal as journal_module
from evalsvc_tools.local.journal import (
    SNAPSHOT,
    Journal,
    JournalFailed,
    Replay,
    StoreFileError,
    compact,
    decode_item,
    encode_record,
    key_text,
    read_segment,
    read_snapshot,
    segment_path,
    segments,
)
from hypothesis import given, settings
from hypothesis import strategies as st

TABLE = "evalsvc-local-T"


def open_journal(
    directory: Path, number: int = 0, undo: Any = None, rotate_at: int | None = None
) -> tuple[Journal, list[Any], list[int]]:
    undone: list[Any] = []
    rotated: list[int] = []
    journal = Journal(
        directory,
        number,
        undo=undo or undone.append,
        store_lock=threading.Lock(),
        rotate_when=lambda size: rotate_at is not None and size > rotate_at,
        rotated=rotated.append,
    )
    return journal, undone, rotated


def put(key: str, value: str | None) -> dict[str, Any]:
    item = None if value is None else {"pk": {"S": key}, "v": {"S": value}}
    return {"i": [[TABLE, {"pk": {"S": key}}, item]]}


def replay_all(directory: Path) -> dict[str, dict[str, Any]]:
    """The state the files hold: the snapshot, then every segment from its `journal` on."""
    replay = Replay()
    state: dict[str, dict[str, Any]] = {}
    snapshot = read_snapshot(directory, replay)
    first = 0
    if snapshot is not None:
        first = snapshot.journal
        for _, key, item in snapshot.lines:
            state[key] = decode_item(item)
    numbers = [n for n in segments(directory) if n >= first]
    for position, number in enumerate(numbers):
        last = position == len(numbers) - 1
        for payload in read_segment(segment_path(directory, number), last=last, replay=replay):
            for _, key, item in payload["i"]:
                if item is None:
                    state.pop(key_text(key), None)
                else:
                    state[key_text(key)] = decode_item(item)
    return state


def test_a_waited_record_is_on_disk_in_order(tmp_path: Path) -> None:
    journal, _, _ = open_journal(tmp_path)
    for k in range(5):
        journal.wait(journal.append(put(f"k{k}", f"v{k}"), undo=None))
    journal.wait(journal.append(put("k1", None), undo=None))

    state = replay_all(tmp_path)  # read while the journal is still open: it is on disk

    assert sorted(state) == [key_text({"pk": {"S": f"k{k}"}}) for k in (0, 2, 3, 4)]
    journal.close()


def test_records_appended_while_one_fsync_runs_share_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal, _, _ = open_journal(tmp_path)
    calls: list[float] = []
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        calls.append(time.monotonic())
        time.sleep(0.02)
        real_fsync(fd)

    monkeypatch.setattr(journal_module.os, "fsync", slow_fsync)
    lock = threading.Lock()

    def writer(k: int) -> None:
        for n in range(10):
            with lock:  # appends happen under the store lock, in order
                seq = journal.append(put(f"w{k}-{n}", "x"), undo=None)
            journal.wait(seq)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(replay_all(tmp_path)) == 160
    assert len(calls) < 160 / 2, f"{len(calls)} fsyncs for 160 records"
    assert journal.flushes == len(calls)
    journal.close()


def test_a_failed_write_is_undone_newest_first_and_later_writes_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal, undone, _ = open_journal(tmp_path)
    journal.wait(journal.append(put("kept", "1"), undo="undo-kept"))
    size = segment_path(tmp_path, 0).stat().st_size
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        # Half the bytes reach the file, then the disk is full.
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", full)
    first = journal.append(put("lost1", "1"), undo="undo-1")
    second = journal.append(put("lost2", "2"), undo="undo-2")
    with pytest.raises(JournalFailed, match="No space left on device"):
        journal.wait(second)
    with pytest.raises(JournalFailed, match=str(tmp_path)):
        journal.wait(first)

    assert undone == ["undo-2", "undo-1"]
    assert segment_path(tmp_path, 0).stat().st_size == size
    monkeypatch.setattr(journal_module.os, "write", real_write)
    journal.wait(journal.append(put("after", "1"), undo=None))
    assert sorted(replay_all(tmp_path)) == sorted(
        key_text({"pk": {"S": k}}) for k in ("kept", "after")
    )
    journal.close()


def three_records(directory: Path) -> Path:
    """A closed segment of three records, k0..k2."""
    journal, _, _ = open_journal(directory)
    for k in range(3):
        journal.wait(journal.append(put(f"k{k}", "v"), undo=None))
    journal.close()
    return segment_path(directory, 0)


def test_a_torn_last_record_is_dropped_and_cut_off(tmp_path: Path) -> None:
    path = three_records(tmp_path)
    whole = path.stat().st_size
    torn = encode_record(put("k3", "v"))[:-7]  # a crash in the middle of the append
    with path.open("ab") as handle:
        handle.write(torn)

    replay = Replay()
    records = list(read_segment(path, last=True, replay=replay))

    assert len(records) == 3
    assert len(replay.torn) == 1 and "torn last record" in replay.torn[0]
    assert path.stat().st_size == whole


def test_a_complete_last_record_with_a_bad_checksum_is_torn_too(tmp_path: Path) -> None:
    journal, _, _ = open_journal(tmp_path)
    journal.wait(journal.append(put("k0", "v"), undo=None))
    journal.close()
    path = segment_path(tmp_path, 0)
    line = bytearray(encode_record(put("k1", "v")))
    line[20] ^= 0x01
    with path.open("ab") as handle:
        handle.write(bytes(line))

    replay = Replay()
    assert len(list(read_segment(path, last=True, replay=replay))) == 1
    assert replay.torn


def test_damage_before_the_last_record_stops_the_start(tmp_path: Path) -> None:
    path = three_records(tmp_path)
    data = bytearray(path.read_bytes())
    data[data.index(b"k1")] = ord("X")  # the middle record no longer matches its checksum
    path.write_bytes(bytes(data))

    with pytest.raises(StoreFileError, match=rf"{path} is damaged at byte \d+"):
        list(read_segment(path, last=True, replay=Replay()))


def test_a_journal_of_another_format_is_refused_with_its_path(tmp_path: Path) -> None:
    path = segment_path(tmp_path, 0)
    path.write_bytes(b'{"evalsvc_journal": 99}\n')

    with pytest.raises(StoreFileError, match=rf"{path} is not a journal this version reads"):
        list(read_segment(path, last=True, replay=Replay()))


def test_a_snapshot_of_another_format_or_cut_short_is_refused(tmp_path: Path) -> None:
    (tmp_path / SNAPSHOT).write_text('{"evalsvc_snapshot": 7, "journal": 0}\n')
    with pytest.raises(StoreFileError, match="not a snapshot this version reads"):
        read_snapshot(tmp_path, Replay())

    key = key_text({"pk": {"S": "a"}})
    (tmp_path / SNAPSHOT).write_text(
        '{"evalsvc_snapshot": 1, "journal": 0, "tables": []}\n'
        f'{TABLE}\t{key}\t{{"pk": {{"S": "a"}}}}\n'
    )
    snapshot = read_snapshot(tmp_path, Replay())
    assert snapshot is not None
    with pytest.raises(StoreFileError, match="ends early"):
        list(snapshot.lines)


def test_binary_values_come_back_as_bytes_at_any_depth() -> None:
    item = {
        "pk": {"S": "k"},
        "b": {"B": b"\x00\xff"},
        "bs": {"BS": [b"\x01", b"\x02"]},
        "m": {"M": {"B": {"B": b"\x03"}, "s": {"S": "B"}}},
        "l": {"L": [{"B": b"\x04"}]},
    }
    line = encode_record({"i": [[TABLE, {"pk": {"S": "k"}}, item]]})
    image = json.loads(line[9:])["i"][0][2]

    assert decode_item(json.dumps(image)) == item
    assert decode_item(image) == item


operations = st.lists(
    st.tuples(st.sampled_from([f"k{k}" for k in range(6)]), st.one_of(st.none(), st.text())),
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(before=operations, after=operations)
def test_a_snapshot_plus_the_journal_after_it_is_the_whole_journal(
    tmp_path_factory: pytest.TempPathFactory,
    before: list[tuple[str, str | None]],
    after: list[tuple[str, str | None]],
) -> None:
    directory = tmp_path_factory.mktemp("journal")
    journal, _, _ = open_journal(directory)
    for key, value in before:
        journal.wait(journal.append(put(key, value), undo=None))
    expected_before = replay_all(directory)
    journal.close()
    second, _, _ = open_journal(directory, number=1)
    for key, value in after:
        second.wait(second.append(put(key, value), undo=None))
    expected = replay_all(directory)

    compact(directory, upto=1)
    segment_path(directory, 0).unlink()

    assert replay_all(directory) == expected
    snapshot = read_snapshot(directory, Replay())
    assert snapshot is not None and snapshot.journal == 1
    assert {key: decode_item(item) for _, key, item in snapshot.lines} == expected_before
    second.close()


def test_a_journal_past_its_threshold_moves_to_a_new_segment(tmp_path: Path) -> None:
    journal, _, rotated = open_journal(tmp_path, rotate_at=2_000)
    for k in range(40):
        journal.wait(journal.append(put(f"k{k}", "v" * 50), undo=None))

    assert rotated and segments(tmp_path)[-1] == journal.number == rotated[-1]
    assert len(replay_all(tmp_path)) == 40
    journal.close()


def test_every_table_of_the_template_has_string_keys() -> None:
    """key_text's identity of a key (used by compaction) holds for string and binary keys,
    whose JSON form is canonical; a number key ("1" and "1.0") would need more."""
    from evalsvc_tools.local.tables import table_definitions

    for logical_id, definition in table_definitions().items():
        types = {a["AttributeName"]: a["AttributeType"] for a in definition["AttributeDefinitions"]}
        for key in definition["KeySchema"]:
            assert types[key["AttributeName"]] in ("S", "B"), (logical_id, key)


def test_a_last_segment_cut_before_its_header_is_removed(tmp_path: Path) -> None:
    journal, _, _ = open_journal(tmp_path)
    journal.wait(journal.append(put("k0", "v"), undo=None))
    journal.close()
    segment_path(tmp_path, 1).write_bytes(b'{"evalsvc_jour')  # the crash came mid-header

    replay = Replay()
    assert list(read_segment(segment_path(tmp_path, 1), last=True, replay=replay)) == []
    assert replay.torn and segments(tmp_path) == [0]


def test_lone_surrogates_and_4_byte_text_survive_the_journal_and_a_compaction(
    tmp_path: Path,
) -> None:
    text = "a\ud800b\udfff" + "\U0001f600" * 1000  # JSON allows lone surrogates
    journal, _, _ = open_journal(tmp_path)
    journal.wait(journal.append(put("k", text), undo=None))
    journal.close()
    expected = {key_text({"pk": {"S": "k"}}): {"pk": {"S": "k"}, "v": {"S": text}}}

    assert replay_all(tmp_path) == expected
    compact(tmp_path, upto=1)
    segment_path(tmp_path, 0).unlink()
    assert replay_all(tmp_path) == expected
