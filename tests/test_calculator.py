"""The runtime's safe calculator: arithmetic and short programs of assignments, nothing else runs."""

from __future__ import annotations

import pytest

from moot.runtime.calculator import CalculationError, calculate, safe_calculate, safe_program


def test_arithmetic_is_computed_exactly_with_written_thousands() -> None:
    assert safe_calculate("(14 - 9) / 9 * 100") == pytest.approx(55.5555555556)
    assert safe_calculate("1,204 + 986 + 731") == 2921
    assert safe_calculate("2 × 3 ÷ 4") == 1.5
    assert calculate("round(10 / 3, 2)") == "round(10 / 3, 2) = 3.33"


@pytest.mark.parametrize("expression", ["__import__('os')", "open('x')", "9**9**9", "1/0", "x + 1", ""])
def test_anything_but_arithmetic_is_refused_with_the_fix(expression: str) -> None:
    with pytest.raises(CalculationError) as caught:
        safe_calculate(expression)
    assert "use numbers" in caught.value.fix


def test_a_program_of_assignments_gives_its_answer_its_steps_and_its_numbers() -> None:
    result = safe_program("adults = 143\nadult_price = 12\n# the children's tickets\nchildren = 38 * 6\n\n"
                          "answer = adults * adult_price + children\n")
    assert result.value == 1944
    assert [s.name for s in result.steps] == ["adults", "adult_price", "children", "answer"]
    assert result.steps[-1].expression == "adults * adult_price + children"
    assert result.literals == (143, 12, 38, 6)
    # without `answer`, the last line's value
    assert safe_program("a = 2\na * 21").value == 42


@pytest.mark.parametrize("program", [
    "import os",
    "answer = None",
    "for i in range(3):\n    answer = i",
    "answer = unknown + 1",
    "a, b = 1, 2",
    "answer = open('x')",
    "\n".join(f"x{i} = {i}" for i in range(30)),
])
def test_a_program_that_is_not_plain_assignments_is_refused(program: str) -> None:
    with pytest.raises(CalculationError):
        safe_program(program)
