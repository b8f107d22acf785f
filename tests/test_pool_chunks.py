"""How the process pool splits the files (engine/pool.py): every file once, the largest
first, and the files whose parse needs most of the memory budget in one chunk of their
own, followed by small files the other workers check meanwhile."""

from __future__ import annotations

from pathlib import Path

from streamlint import memory
from streamlint.config import Settings
from streamlint.engine import pool

HUGE = memory.BUDGET // memory.PARSE_MEMORY_FACTOR  # a parse of this many bytes needs the whole budget


def make(tmp_path: Path, sizes: dict[str, int]) -> list[tuple[Path, Settings]]:
    items = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_bytes(b"#" * size)
        items.append((path, Settings()))
    return items


def names(chunk) -> list[str]:
    return [path.name for path, _ in chunk]


def test_every_file_once_largest_first(tmp_path):
    sizes = {f"f{i}.py": 1000 * (i % 97 + 1) for i in range(300)}
    chunks = pool._chunks(make(tmp_path, sizes), 2)
    flat = [name for chunk in chunks for name in names(chunk)]
    assert sorted(flat) == sorted(sizes)
    assert sizes[flat[0]] == max(sizes.values())


def test_huge_files_come_first_together_then_small_companions(tmp_path):
    sizes = {"huge1.py": HUGE, "huge2.py": HUGE - 1, "big.py": 5 * memory.SMALL_TEXT}
    sizes.update({f"s{i}.py": 1000 + i for i in range(400)})
    chunks = pool._chunks(make(tmp_path, sizes), 2)
    assert names(chunks[0]) == ["huge1.py", "huge2.py"]
    # Small files next (no reservation: they run beside the huge parses), then big.py.
    first_big = next(n for n, chunk in enumerate(chunks) if "big.py" in names(chunk))
    assert first_big > 1 and all(sizes[name] < memory.SMALL_TEXT for chunk in chunks[1:first_big]
                                 for name in names(chunk))
    assert sum(len(c) for c in chunks) == len(sizes)


def test_one_worker_keeps_the_plain_order(tmp_path):
    sizes = {"huge.py": HUGE, "big.py": 5 * memory.SMALL_TEXT, "small.py": 10}
    chunks = pool._chunks(make(tmp_path, sizes), 1)
    assert [names(c) for c in chunks][0] == ["huge.py"]
    assert [name for c in chunks for name in names(c)] == ["huge.py", "big.py", "small.py"]
