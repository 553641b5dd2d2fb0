"""A safe calculator: plain arithmetic parsed with :mod:`ast`, never ``eval()``.

Small models add badly, so teams give them this tool (or call it in Python) instead of trusting
their arithmetic. Only an allow-list of node types is walked: names, attributes and calls other
than a few math functions are refused, and exponents and magnitudes are bounded so a model
cannot make the process spin on ``9**9**9``.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moot.errors import MootError

MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 100
MAX_MAGNITUDE = 1e100
MAX_NODES = 100


class CalculationError(MootError, ValueError):
    """The expression is not plain arithmetic, or it is too big to compute safely."""

    fix = "use numbers, + - * / // % ** and parentheses; functions: round, abs, min, max, sqrt"


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "round": round,
    "abs": abs,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
}


def _number(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculationError("only numbers are allowed")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise CalculationError(f"a value exceeds {MAX_MAGNITUDE:g}")
    return value


def _evaluate(node: ast.AST, names: dict[str, float | int] | None = None) -> float | int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names)
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.Name) and names is not None and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _number(_UNARY[type(node.op)](_evaluate(node.operand, names)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        if isinstance(node.op, ast.Pow):
            if abs(right) > MAX_EXPONENT:
                raise CalculationError(f"exponents are limited to ±{MAX_EXPONENT}")
            if abs(left) > 1 and abs(right) * math.log10(abs(left)) > math.log10(MAX_MAGNITUDE):
                raise CalculationError(f"the result would exceed {MAX_MAGNITUDE:g}")
        try:
            return _number(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
        except OverflowError:
            raise CalculationError("the result is too large") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords:
            raise CalculationError("keyword arguments are not allowed")
        args = [_evaluate(a, names) for a in node.args]
        try:
            return _number(_FUNCTIONS[node.func.id](*args))
        except (TypeError, ValueError) as exc:
            raise CalculationError(f"{node.func.id}(): {exc}") from None
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
        raise CalculationError(
            "names, attributes and calls are not allowed (functions: " + ", ".join(_FUNCTIONS) + ")"
        )
    raise CalculationError(f"{type(node).__name__} is not allowed in arithmetic")


def _plain(expression: str) -> str:
    text = expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,234 → 1234


def _tidy(result: float | int) -> float | int:
    if isinstance(result, float) and result.is_integer() and abs(result) < 1e15:
        return int(result)
    return round(result, 10) if isinstance(result, float) else result


def safe_calculate(expression: str) -> float | int:
    """Evaluate plain arithmetic safely; raises :class:`CalculationError` for anything else."""
    text = _plain(expression)
    if not text:
        raise CalculationError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"expressions are limited to {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(f"not an arithmetic expression: {expression!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError("the expression is too long")
    return _tidy(_evaluate(tree))


MAX_PROGRAM_LINES = 20


@dataclass(frozen=True)
class Step:
    """One line of a program: the name it sets, the expression as written, and its value."""

    name: str
    expression: str
    value: float | int


@dataclass(frozen=True)
class ProgramResult:
    """What a program of assignments works out to."""

    value: float | int
    """The value of ``answer`` (or of the last line)."""
    steps: tuple[Step, ...]
    """Every assignment in order."""
    literals: tuple[float | int, ...]
    """Every number written in the program, in order: what a caller checks against its sources."""


def safe_program(source: str, *, result: str = "answer") -> ProgramResult:
    """Run a short program of arithmetic assignments (``adult = 143 * 12``; ``answer = adult + 228``)
    safely: each line assigns one name from numbers and names set before it, nothing else runs.

    A model that adds badly writes which numbers to combine and how; this computes. The value is
    the name ``result`` if the program sets it, else the last line's. Raises
    :class:`CalculationError` for anything else (a loop, an import, an unknown name, ``None``).
    """
    text = "\n".join(line for line in _plain(source).splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if not text:
        raise CalculationError("the program is empty")
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError:
        raise CalculationError("not a program of arithmetic assignments") from None
    if len(tree.body) > MAX_PROGRAM_LINES:
        raise CalculationError(f"programs are limited to {MAX_PROGRAM_LINES} lines")
    names: dict[str, float | int] = {}
    steps: list[Step] = []
    last: float | int | None = None
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            target, node = statement.targets[0].id, statement.value
        elif isinstance(statement, ast.Expr):
            target, node = "", statement.value
        else:
            raise CalculationError(f"line {statement.lineno}: only `name = arithmetic` lines are allowed")
        if sum(1 for _ in ast.walk(node)) > MAX_NODES:
            raise CalculationError(f"line {statement.lineno} is too long")
        if isinstance(node, ast.Constant) and node.value is None:
            raise CalculationError("the program gives no value")
        last = _tidy(_evaluate(node, names))
        if target:
            names[target] = last
            steps.append(Step(name=target, expression=ast.unparse(node), value=last))
    value = names.get(result, last)
    if value is None:
        raise CalculationError("the program gives no value")
    literals = tuple(_number(n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant))
    return ProgramResult(value=value, steps=tuple(steps), literals=literals)


def calculate(expression: str) -> str:
    """Compute an arithmetic expression exactly, e.g. "(14 - 9) / 9 * 100".

    Args:
        expression: Numbers with + - * / // % ** and parentheses; round, abs, min, max, sqrt.
    """
    return f"{expression.strip()} = {safe_calculate(expression)}"


__all__ = ["CalculationError", "ProgramResult", "Step", "calculate", "safe_calculate", "safe_program"]
