"""``fio.parse._document``'s one-entry memo read by two threads (a test's fio run and the
background engine probe): the entry is read once, so a check and its answer come from the same
entry even when the other thread replaces it in between."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ssdqual.fio import parse


class _Replaced(list):  # type: ignore[type-arg]
    """The memo list as another thread leaves it: every access after the first sees ``later``
    (the other thread's ``_last[:] = [...]`` between two reads)."""

    def __init__(self, first: Any, later: Any) -> None:
        super().__init__([first])
        self.later = later
        self.reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index) if self.reads == 1 else self.later


def test_the_memo_entry_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps({"fio version": "fio-3.33", "jobs": []})
    # the entry first seen is another text of the same source; the one after it this text of
    # another source, holding a document that is not this text's
    first = ("{}", "fio job", ("", {}, ""))
    later = (text, "fio probe", ("", {"not": "this text's document"}, ""))
    monkeypatch.setattr(parse, "_last", _Replaced(first, later))
    assert parse._document(text, "fio job") == ("", {"fio version": "fio-3.33", "jobs": []}, "")
