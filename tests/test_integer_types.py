"""Which declared type spellings are unsigned integers (frontends/common/integer_types.py)."""
from __future__ import annotations

import pytest

from ortlint.frontends.common.integer_types import is_unsigned_integer


@pytest.mark.parametrize("text", ["size_t", "std::size_t", "const size_t", "unsigned", "unsigned int",
                                  "unsigned long long", "uint32_t", "std::uint8_t", "uint_fast16_t", "uintptr_t"])
def test_unsigned(text: str) -> None:
    assert is_unsigned_integer(text)


@pytest.mark.parametrize("text", ["int", "long", "ssize_t", "int64_t", "jsize", "size_t*", "size_t&",
                                  "std::vector<size_t>", "unsigned char*", "float", "my_size_t", ""])
def test_not_unsigned(text: str) -> None:
    assert not is_unsigned_integer(text)
