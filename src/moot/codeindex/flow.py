"""The control flow of one definition: the conditions that decide, what each does, and the exits.

A question that asks *how* code decides something ("what happens to the method on a
redirect?", "when does it give up?") is answered by a few branches: the ``if`` on the status,
the early ``return``, the ``raise``. The index knows where a function is and who calls it; this
module reads what it decides, with tree-sitter (Python, JavaScript, TypeScript), and states
each decision from the syntax tree, not from a model:

```python
for d in index.decisions("web/redirects.py", 6, 10):
    print(d.line, d.text, "→", d.outcome_text(), "|", d.words)
# 8 if status == SEE_OTHER and method != "HEAD": → method = "GET" |
#   When `status` equals `SEE_OTHER` and `method` is not `"HEAD"`, it sets `method` to `"GET"`.
```

Each :class:`Decision` is one branch point of the definition's own body (nested functions
are definitions of their own and are left out; a function written in place, such as a
callback passed to a call, has no definition in the index and is read as part of this one):
an ``if``/``elif``/``else``, a ``while``, an
``except``/``catch``, a ``case``, a conditional expression, an ``assert``, and the ``raise``
and ``return`` statements that are not already a branch's outcome. ``words`` is written by a
fixed set of rules over the tree (``a == B`` → "`a` equals `B`"), so it says what the code
says and nothing more; what is not covered by a rule is quoted ("`expr` holds").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

from moot.codeindex.parse import _FUNCTION_VALUES, _grammar, function_binding

_FUNCTIONS = frozenset({"function_definition", "function_declaration", "generator_function_declaration",
                        "method_definition", "arrow_function", "function_expression", "function", "generator_function"})
_CLASSES = frozenset({"class_definition", "class_declaration", "abstract_class_declaration", "class"})
_LITERALS = frozenset({"string", "integer", "float", "number", "true", "false", "none", "null", "undefined",
                       "template_string", "concatenated_string"})
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]+")
"""The naming convention of a constant (``SEE_OTHER``, ``MAX_REDIRECTS``): a format, not a word."""
_VALUE_NAMES = frozenset({"identifier", "property_identifier", "private_property_identifier"})
"""The nodes that name a value, a property or a method (``this.#next()`` names ``#next``)."""
CODE_CHARS = 70
"""A fragment of code quoted in ``words`` is cut here."""


@dataclass(frozen=True)
class Decision:
    """One place where a definition's behaviour branches, with what each branch does."""

    kind: str
    """``if``, ``elif``, ``else``, ``while``, ``except``, ``case``, ``default``, ``ternary``,
    ``assert``, ``raise`` (a raise that is no branch's first statement) or ``return`` (likewise)."""
    line: int
    """The line the decision starts on (its keyword)."""
    text: str
    """That line as it is in the file, stripped of its indentation."""
    condition: str = ""
    """The condition as written, whitespace collapsed (``""`` for ``else``, ``raise``, ``return``)."""
    outcome: tuple[tuple[int, str], ...] = ()
    """The first line(s) of what the branch does, verbatim with their numbers (two at most: a
    nested condition is shown with its own first line)."""
    exit: str = ""
    """How the branch leaves: ``return``, ``raise``, ``break``, ``continue``, or ``""`` (it goes on)."""
    calls: tuple[str, ...] = ()
    """The functions the condition calls (the callees that decide)."""
    outcome_calls: tuple[str, ...] = ()
    """The functions the branch's first statement calls."""
    names: tuple[str, ...] = ()
    """The identifiers the condition reads."""
    literal: bool = False
    """The condition compares with a literal or a constant (``status == 303``, ``x is None``, ``SEE_OTHER``)."""
    depth: int = 0
    """How many decisions enclose this one."""
    words: str = ""
    """The decision in words, written from the syntax tree."""
    end_line: int = 0
    """The last line the outcome shows (the decision's own line when it shows none)."""

    def outcome_text(self) -> str:
        return "\n".join(text for _, text in self.outcome)


# --------------------------------------------------------------------------------- reading


def decisions(language: str, source: str, start_line: int, end_line: int) -> list[Decision]:
    """The decisions of the definition that spans ``start_line``..``end_line`` of ``source``
    (1-based, as the index stores them), in source order; ``[]`` for a class or a span that
    holds no function."""
    data = source.encode("utf-8", errors="surrogatepass")
    # A copy per call: a syntax tree is not safe to read from two threads at once, and the
    # researchers' lists are ranked in parallel threads. Copying is shallow and cheap.
    root = _parsed(language, data).copy().root_node
    target = _definition(root, start_line, end_line)
    if target is None:
        return []
    body = target.child_by_field_name("body")
    if body is None:
        return []
    reader = _Reader(data, language)
    reader.visit(body, 0, top=True)
    return sorted(reader.found, key=lambda d: (d.line, _KIND_ORDER.get(d.kind, 9)))


@lru_cache(maxsize=32)
def _parsed(language: str, data: bytes) -> tree_sitter.Tree:
    """One file's syntax tree, kept for the next definition of the same file: ranking one
    question's candidates reads the decisions of every definition they come from, and each read
    parsed the whole file again. Keyed by the file's bytes, so an edited file is parsed anew and
    nothing needs invalidating."""
    parser, _ = _grammar(language)
    return parser.parse(data)


_KIND_ORDER = {"if": 0, "elif": 0, "while": 0, "case": 0, "except": 0, "assert": 0, "else": 1, "default": 1,
               "ternary": 2, "raise": 3, "return": 3}


def _definition(root: tree_sitter.Node, start_line: int, end_line: int) -> tree_sitter.Node | None:
    """The outermost function node inside the span (a decorated definition starts at its
    decorator, a ``const f = () => …`` at its declaration: the index's lines)."""
    best: tree_sitter.Node | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        first, last = node.start_point.row + 1, node.end_point.row + 1
        if last < start_line or first > end_line:
            continue
        if node.type in _FUNCTIONS and first >= start_line and last <= end_line:
            if best is None or (last - first) > (best.end_point.row - best.start_point.row):
                best = node
            continue
        stack.extend(node.children)
    return best


@dataclass
class _Reader:
    data: bytes
    language: str
    found: list[Decision] = field(default_factory=list)
    covered: set[int] = field(default_factory=set)
    """Start bytes of statements already shown as some branch's outcome."""
    lines: list[str] = field(default_factory=list)
    prelude: list[tree_sitter.Node] = field(default_factory=list)
    """The plain steps just before the top-level ``return`` being recorded (see :meth:`visit`)."""
    callbacks: int = 0
    """How many callbacks written in place enclose the statement being read (a ``return`` there
    leaves the callback, not the definition)."""

    # -- text

    def text(self, node: tree_sitter.Node | None) -> str:
        if node is None:
            return ""
        return " ".join(self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace").split())

    def line_text(self, row: int) -> str:
        if not self.lines:
            self.lines = self.data.decode("utf-8", errors="replace").split("\n")
        return self.lines[row].strip() if 0 <= row < len(self.lines) else ""

    # -- walking

    def visit(self, node: tree_sitter.Node, depth: int, *, top: bool = False) -> None:
        # The plain steps read since the definition's last decision: at its own top level, a
        # `return` states them (the way through when no condition above held).
        steps: list[tree_sitter.Node] = []
        for child in node.named_children:
            if top and child.type == "return_statement" and child.start_byte not in self.covered:
                self.prelude = steps[-STEPS:]
            self.statement(child, depth, top=top)
            self.prelude = []
            if top:
                steps = [*steps, child] if _plain(child) else ([] if child.type != "comment" else steps)

    def statement(self, node: tree_sitter.Node, depth: int, *, top: bool = False) -> None:
        t = node.type
        if t in _FUNCTIONS or t in _CLASSES or t == "decorated_definition":
            return  # a definition of its own
        if t == "if_statement":
            self.if_chain(node, depth, "if")
        elif t in ("while_statement", "do_statement"):
            self.branch("while", node, node.child_by_field_name("condition"), node.child_by_field_name("body"), depth)
        elif t == "try_statement":
            for child in node.named_children:
                if child.type in ("except_clause", "except_group_clause", "catch_clause"):
                    self.handler(child, depth)
                elif child.type in ("block", "statement_block", "finally_clause", "else_clause"):
                    self.visit(child if child.type != "finally_clause" else child, depth)
        elif t == "match_statement":
            for case in (node.child_by_field_name("body") or node).named_children:
                if case.type == "case_clause":
                    pattern = " ".join(self.text(c) for c in case.named_children if c.type == "case_pattern")
                    guard = next((c for c in case.named_children if c.type == "if_clause"), None)
                    cond = pattern + (f" if {self.text(guard.named_children[0])}" if guard is not None and guard.named_children else "")
                    self.branch("case", case, guard.named_children[0] if guard is not None and guard.named_children else None,
                                case.child_by_field_name("consequence"), depth, condition_text=cond)
        elif t == "switch_statement":
            for case in (node.child_by_field_name("body") or node).named_children:
                if case.type == "switch_case":
                    self.branch("case", case, case.child_by_field_name("value"), case, depth, skip_first=True)
                elif case.type == "switch_default":
                    self.branch("default", case, None, case, depth, skip_first=False)
        elif t == "assert_statement":
            cond = node.named_children[0] if node.named_children else None
            self.add("assert", node, cond, None, depth)
        elif t in ("raise_statement", "throw_statement", "return_statement"):
            if node.start_byte not in self.covered and not (t == "return_statement" and self.callbacks):
                self.add("raise" if t != "return_statement" else "return", node, None, None, depth)
            self.expressions(node, depth)
        else:
            self.expressions(node, depth)
            for child in node.named_children:
                if child.type in ("block", "statement_block", "else_clause", "finally_clause"):
                    self.visit(child, depth)
                elif child.type.endswith("_statement") or child.type == "with_clause":
                    self.statement(child, depth)

    def expressions(self, node: tree_sitter.Node, depth: int) -> None:
        """Conditional expressions inside a statement (not inside nested definitions; a callback
        written in place is read, :meth:`inline_function`)."""
        stack = list(node.named_children)
        while stack:
            child = stack.pop(0)
            if _inline(child):
                self.inline_function(child, depth)
                continue
            if child.type in _FUNCTIONS or child.type in _CLASSES or child.type.endswith("_statement") or child.type in ("block", "statement_block"):
                continue
            if child.type in ("conditional_expression", "ternary_expression"):
                self.ternary(child, depth)
            stack.extend(child.named_children)

    def inline_function(self, node: tree_sitter.Node, depth: int) -> None:
        """An anonymous function written in place (a callback, a promise's executor): no
        definition of its own in the index, so what it decides is its enclosing definition's."""
        body = node.child_by_field_name("body")
        if body is None:
            return
        self.callbacks += 1
        try:
            if body.type == "statement_block":
                self.visit(body, depth)
            else:  # `x => x ? a : b`: an expression body
                self.expressions(node, depth)
        finally:
            self.callbacks -= 1

    def if_chain(self, node: tree_sitter.Node, depth: int, kind: str) -> None:
        self.branch(kind, node, node.child_by_field_name("condition"), node.child_by_field_name("consequence"), depth)
        for alternative in node.children_by_field_name("alternative"):
            if alternative.type == "elif_clause":
                self.branch("elif", alternative, alternative.child_by_field_name("condition"),
                            alternative.child_by_field_name("consequence"), depth)
            elif alternative.type == "else_clause":
                inner = alternative.child_by_field_name("body") or (alternative.named_children[0] if alternative.named_children else None)
                if inner is not None and inner.type == "if_statement":  # JS/TS `else if`
                    self.if_chain(inner, depth, "elif")
                else:
                    self.branch("else", alternative, None, inner, depth)

    def handler(self, node: tree_sitter.Node, depth: int) -> None:
        if node.type == "catch_clause":
            # `catch (e)` names a variable, not what is caught: any error
            self.branch("except", node, None, node.child_by_field_name("body"), depth, condition_text="")
            return
        value = node.child_by_field_name("value") or next((c for c in node.named_children if c.type not in ("block",)), None)
        if value is not None and value.type == "as_pattern" and value.named_children:
            value = value.named_children[0]
        body = next((c for c in node.named_children if c.type == "block"), None)
        self.branch("except", node, None, body, depth, condition_text=self.text(value) if value is not None else "")

    def ternary(self, node: tree_sitter.Node, depth: int) -> None:
        if node.type == "ternary_expression":
            cond = node.child_by_field_name("condition")
            yes, no = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        else:  # Python: `a if cond else b`, no field names
            parts = node.named_children
            if len(parts) < 3:
                return
            yes, cond, no = parts[0], parts[1], parts[2]
        self.add("ternary", node, cond, None, depth, yes=yes, no=no)

    def branch(self, kind: str, node: tree_sitter.Node, cond: tree_sitter.Node | None, body: tree_sitter.Node | None,
               depth: int, *, condition_text: str | None = None, skip_first: bool = False) -> None:
        statements = self.statements(body, skip_first=skip_first)
        self.add(kind, node, cond, statements, depth, condition_text=condition_text)
        for statement in statements:
            self.statement(statement, depth + 1)

    def statements(self, body: tree_sitter.Node | None, *, skip_first: bool = False) -> list[tree_sitter.Node]:
        if body is None:
            return []
        if body.type in ("block", "statement_block", "switch_case", "switch_default"):
            children = [c for c in body.named_children if c.type != "comment"]
            if body.type == "switch_case":
                value = body.child_by_field_name("value")
                children = [c for c in children if value is None or c.start_byte != value.start_byte]
            return children
        return [body]  # `if (x) return y;`: a single statement

    # -- recording

    def add(self, kind: str, node: tree_sitter.Node, cond: tree_sitter.Node | None, statements: list[tree_sitter.Node] | None,
            depth: int, *, condition_text: str | None = None, yes: tree_sitter.Node | None = None,
            no: tree_sitter.Node | None = None) -> None:
        row = node.start_point.row
        condition = condition_text if condition_text is not None else _unparen(self.text(cond))
        outcome: list[tuple[int, str]] = []
        exit_ = ""
        outcome_calls: tuple[str, ...] = ()
        folded = _folded_exit(kind, statements) if statements else None
        if statements:
            first = statements[0]
            self.covered.add(first.start_byte)
            if first.start_point.row != row:
                outcome.append((first.start_point.row + 1, self.line_text(first.start_point.row)))
                if first.type == "if_statement":  # a nested condition alone is half a statement
                    inner = self.statements(first.child_by_field_name("consequence"))
                    if inner and inner[0].start_point.row != first.start_point.row:
                        outcome.append((inner[0].start_point.row + 1, self.line_text(inner[0].start_point.row)))
            exit_ = _exit(statements[-1])
            outcome_calls = tuple(self.calls(first))
            if folded is not None:
                self.covered.add(folded.start_byte)  # stated with the branch: not a decision again
        elif kind in ("raise", "return"):
            exit_ = kind
            outcome_calls = tuple(self.calls(node))
        subject = cond if cond is not None else None
        words = self.say(kind, subject, condition, statements, node, yes=yes, no=no, folded=folded)
        self.found.append(Decision(
            kind=kind, line=row + 1, text=self.line_text(row), condition=condition, outcome=tuple(outcome), exit=exit_,
            calls=tuple(self.calls(cond)) if cond is not None else (), outcome_calls=outcome_calls,
            names=tuple(self.names(cond)) if cond is not None else (),
            literal=self.has_literal(cond) if cond is not None and cond.type not in ("true", "True") else False,
            depth=depth, words=words, end_line=outcome[-1][0] if outcome else row + 1,
        ))  # fmt: skip

    def calls(self, node: tree_sitter.Node | None) -> list[str]:
        out: list[str] = []
        for n in _walk(node):
            if n.type in ("call", "call_expression", "new_expression"):
                target = n.child_by_field_name("function") or n.child_by_field_name("constructor")
                name = _last_name(self, target)
                if name and name not in out:
                    out.append(name)
        return out

    def names(self, node: tree_sitter.Node | None) -> list[str]:
        out: list[str] = []
        for n in _walk(node):
            if n.type in _VALUE_NAMES or n.type == "type_identifier":
                name = self.text(n)
                if name not in out:
                    out.append(name)
        return out

    def has_literal(self, node: tree_sitter.Node | None) -> bool:
        for n in _walk(node):
            if n.type in _LITERALS:
                return True
            if n.type in _VALUE_NAMES and _CONSTANT.fullmatch(self.text(n)):
                return True
        return False

    # -- words

    def say(self, kind: str, cond: tree_sitter.Node | None, condition: str, statements: list[tree_sitter.Node] | None,
            node: tree_sitter.Node, *, yes: tree_sitter.Node | None = None, no: tree_sitter.Node | None = None,
            folded: tree_sitter.Node | None = None) -> str:
        body = list(statements or [])
        if kind in ("case", "default") and body and body[-1].type == "break_statement":
            body = body[:-1]  # how every case ends, not what it decides
        does = self.steps(body, folded)
        when = self.condition(cond) if cond is not None else (f"`{_cut(condition)}`" if condition else "")
        if kind == "while" and cond is not None and _unparen(self.text(cond)) in ("true", "True"):
            return f"It repeats until a `return`, `raise` or `break` leaves the loop; first {does or 'it goes on'}."
        if kind in ("if", "elif", "while"):
            lead = "While" if kind == "while" else "When"
            return f"{lead} {when}, {does or 'it goes on'}."
        if kind in ("else", "default"):
            return f"Otherwise, {does or 'it goes on'}."
        if kind == "except":
            what = f"`{_cut(condition)}` is raised" if condition else "an error is raised"
            return f"When {what}, {does or 'it goes on'}."
        if kind == "case":
            return f"When the value matches `{_cut(condition)}`, {does or 'it goes on'}."
        if kind == "ternary":
            return f"When {when}, the value is `{_cut(self.text(yes))}`, otherwise `{_cut(self.text(no))}`."
        if kind == "assert":
            return f"It requires that {when}."
        if kind == "return" and self.prelude:
            # The way through: what the definition does when no condition above stopped it
            # (`max_id = max(ids); next_id = max_id + 1; return next_id`).
            return _capital(self.steps([*self.prelude, node], node)) + "."
        if kind in ("raise", "return"):
            return _capital(self.does(node)) + "."
        return ""

    def steps(self, statements: list[tree_sitter.Node], leaves: tree_sitter.Node | None) -> str:
        """What a run of statements does, in order: the first ``STEPS`` of them, then how the
        run leaves (``leaves``, its last statement, when it returns, raises, breaks or
        continues). A branch that does something and then leaves is stated whole (`if paused:
        note the time; count it; return False`), not by its first line alone."""
        body = [s for s in statements if s is not leaves]
        said = [self.does(s) for s in body[:STEPS]]
        if len(body) > STEPS:
            said.append(f"{len(body) - STEPS} more step{'s' if len(body) - STEPS > 1 else ''}")
        said = [s if i == 0 else _drop_it(s) for i, s in enumerate(said) if s]
        text = ", ".join(said) if leaves is not None or len(said) < 2 else f"{', '.join(said[:-1])} and {said[-1]}"
        if leaves is not None:
            end = self.does(leaves)
            text = f"{text}, then {end}" if text else end
        return text

    def does(self, node: tree_sitter.Node) -> str:
        """What one statement does, in a few words."""
        t = node.type
        if t == "return_statement":
            value = node.named_children[0] if node.named_children else None
            who = "the callback" if self.callbacks else "it"
            return f"{who} returns `{_cut(self.text(value))}`" if value is not None else f"{who} returns"
        if t in ("raise_statement", "throw_statement"):
            value = node.named_children[0] if node.named_children else None
            if value is None:
                return "it raises the error again"
            if value.type in ("call", "new_expression", "call_expression"):
                target = value.child_by_field_name("function") or value.child_by_field_name("constructor")
                return f"it raises `{_cut(self.text(target))}`"
            return f"it raises `{_cut(self.text(value))}`"
        if t == "break_statement":
            return "it breaks out (`break`)"
        if t == "continue_statement":
            return "it skips to the next round of the loop"
        if t == "pass_statement":
            return "it does nothing"
        if t == "delete_statement":
            return f"it deletes `{_cut(self.text(node.named_children[0]) if node.named_children else '')}`"
        if t == "if_statement":
            return f"it checks whether {self.condition(node.child_by_field_name('condition'))}"
        if t in ("for_statement", "for_in_statement") and node.child_by_field_name("right") is not None:
            # `for key in keys:`, `for (const item of list)`: each item in turn
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            return f"it goes through each `{_cut(self.text(left))}` in `{_cut(self.text(right))}`{self.each(node)}"
        if t in ("for_statement", "while_statement") and node.child_by_field_name("condition") is not None:
            return f"it repeats while {self.condition(node.child_by_field_name('condition'))}{self.each(node)}"
        if t == "with_statement":
            items = next((c for c in node.named_children if c.type == "with_clause"), None)
            return f"it runs a block under `with {_cut(self.text(items))}`" if items is not None else "it runs a `with` block"
        if t == "try_statement":
            return "it runs a `try` block"
        if t in ("expression_statement", "lexical_declaration", "variable_declaration"):
            inner = node.named_children[0] if node.named_children else None
            if inner is None:
                return ""
            if inner.type in ("assignment", "assignment_expression", "variable_declarator"):
                left = inner.child_by_field_name("left") or inner.child_by_field_name("name")
                right = inner.child_by_field_name("right") or inner.child_by_field_name("value")
                if right is None:
                    return f"it declares `{_cut(self.text(left))}`"
                return f"it sets `{_cut(self.text(left))}` to `{_cut(self.text(right))}`"
            if inner.type in ("augmented_assignment", "augmented_assignment_expression", "update_expression"):
                left = inner.child_by_field_name("left") or inner.child_by_field_name("argument") or inner
                return f"it updates `{_cut(self.text(left))}`"
            if inner.type in ("call", "call_expression", "await", "await_expression"):
                return f"it calls `{_cut(self.text(inner))}`"
            return f"it evaluates `{_cut(self.text(inner))}`"
        return f"it runs `{_cut(self.text(node))}`"

    def each(self, loop: tree_sitter.Node) -> str:
        """What a loop does each time round, by its body's first statement (``""`` for none)."""
        first = next(iter(self.statements(loop.child_by_field_name("body"))), None)
        return f" and each time {_drop_it(self.does(first))}" if first is not None else ""

    def condition(self, node: tree_sitter.Node | None, negated: bool = False) -> str:
        """A condition in words: `a == B` → "`a` equals `B`", `not x` → "`x` is false", …"""
        if node is None:
            return ""
        t = node.type
        if t == "parenthesized_expression" and node.named_children:
            return self.condition(node.named_children[0], negated)
        if t == "boolean_operator" or (t == "binary_expression" and self._op(node) in ("&&", "||", "??")):
            op = self._op(node)
            if op == "??":
                return self._truth(node, negated)
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            joined = self._joined(node, negated)
            first, second = self._part(left, negated, joined), self._part(right, negated, joined)
            # a comma sets a group off from the rest, also one held deeper in a side
            grouped = any(_GROUP.search(re.sub(r"`[^`]*`", "", side)) for side in (first, second))
            return f"{first}{',' if grouped else ''} {joined} {second}"
        if t == "not_operator" or (t == "unary_expression" and self._op(node) == "!"):
            inner = node.child_by_field_name("argument")
            return self.condition(inner, not negated)
        if t == "comparison_operator":
            operands = [c for c in node.named_children]
            operators = [self.text(c) for i, c in enumerate(node.children) if node.field_name_for_child(i) == "operators"]
            if len(operands) == len(operators) + 1:
                parts = [self._compare(operands[i], operators[i], operands[i + 1], negated) for i in range(len(operators))]
                return (" or " if negated else " and ").join(parts)
        if t == "binary_expression":
            op = self._op(node)
            if op in _COMPARE:
                return self._compare(node.child_by_field_name("left"), op, node.child_by_field_name("right"), negated)
        if t in ("call", "call_expression"):
            target = self.text(node.child_by_field_name("function"))
            args = [c for c in (node.child_by_field_name("arguments") or node).named_children if c.type != "comment"]
            if target == "isinstance" and len(args) == 2:
                return f"`{_cut(self.text(args[0]))}` is {'not ' if negated else ''}a `{_cut(self.text(args[1]))}`"
            if target == "hasattr" and len(args) == 2:
                return f"`{_cut(self.text(args[0]))}` {'lacks' if negated else 'has'} `{_cut(self.text(args[1]).strip(chr(34) + chr(39)))}`"
            return f"`{_cut(self.text(node))}` returns {'false' if negated else 'true'}"
        return self._truth(node, negated)

    def _joined(self, node: tree_sitter.Node | None, negated: bool) -> str:
        """``and`` or ``or`` when ``node`` (inside brackets and negations) joins two conditions,
        as its words will say it (a negated "and" is said as an "or" of negations, and the other way
        round), else ``""``."""
        while node is not None:
            t = node.type
            if t == "parenthesized_expression" and node.named_children:
                node = node.named_children[0]
            elif t == "not_operator" or (t == "unary_expression" and self._op(node) == "!"):
                node, negated = node.child_by_field_name("argument"), not negated
            elif t == "boolean_operator" or (t == "binary_expression" and self._op(node) in ("&&", "||")):
                joined = {"and": "and", "&&": "and", "or": "or", "||": "or"}[self._op(node)]
                return ("or" if joined == "and" else "and") if negated else joined
            else:
                return ""
        return ""

    def _part(self, node: tree_sitter.Node | None, negated: bool, outer: str) -> str:
        """One side of an ``and``/``or`` in words; a group joined the other way is marked as one
        ("either … or …", "both … and …"), since the words have no brackets to keep it together."""
        words = self.condition(node, negated)
        inner = self._joined(node, negated)
        if inner and inner != outer:
            return f"either {words}" if inner == "or" else f"both {words}"
        return words

    def _truth(self, node: tree_sitter.Node, negated: bool) -> str:
        return f"`{_cut(self.text(node))}` is {'false or empty' if negated else 'true'}"

    def _op(self, node: tree_sitter.Node) -> str:
        op = node.child_by_field_name("operator")
        return self.text(op) if op is not None else ""

    def _compare(self, left: tree_sitter.Node | None, op: str, right: tree_sitter.Node | None, negated: bool) -> str:
        if negated:
            op = _NEGATE.get(op, op)
            if op not in _COMPARE:
                return f"not `{_cut(self.text(left))} {op} {_cut(self.text(right))}`"
        a, b = _cut(self.text(left)), _cut(self.text(right))
        return f"`{a}` {_COMPARE[op]} `{b}`"


_GROUP = re.compile(r"(?:^|\s)(?:either|both) ")
"""The words that open a group of conditions joined the other way (code is in backticks, so these are moot's own)."""

_COMPARE = {"==": "equals", "===": "equals", "!=": "is not", "!==": "is not", "<": "is less than",
            "<=": "is at most", ">": "is more than", ">=": "is at least", "in": "is in", "not in": "is not in",
            "is": "is", "is not": "is not", "instanceof": "is an instance of", "not instanceof": "is not an instance of"}
_NEGATE = {"==": "!=", "===": "!==", "!=": "==", "!==": "===", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
           "in": "not in", "not in": "in", "is": "is not", "is not": "is", "instanceof": "not instanceof"}
"""Each comparison and its opposite (JavaScript has no ``not instanceof``: it stands for ``!(a instanceof B)``)."""


STEPS = 4
"""A branch's statements (or the plain steps before a ``return``) stated in words, at most."""

_PLAIN = frozenset({"expression_statement", "lexical_declaration", "variable_declaration", "delete_statement"})


def _plain(node: tree_sitter.Node) -> bool:
    """A statement that does one thing and never branches (an assignment, a call), and is no
    docstring or string standing alone."""
    if node.type not in _PLAIN:
        return False
    inner = node.named_children[0] if node.named_children else None
    return inner is not None and inner.type not in ("string", "template_string", "concatenated_string")


def _drop_it(text: str) -> str:
    """``it sets `a` `` → ``sets `a` ``: the steps after the first share the first's subject."""
    return text[3:] if text.startswith("it ") else text


def _inline(node: tree_sitter.Node) -> bool:
    """A function expression the index does not define: one bound to no name (see
    :func:`~moot.codeindex.parse.function_binding`), such as a callback passed to a call."""
    return node.type in _FUNCTION_VALUES and function_binding(node) is None


def _folded_exit(kind: str, statements: list[tree_sitter.Node]) -> tree_sitter.Node | None:
    """The statement a branch of several leaves by, stated with the branch; ``None`` when the
    branch goes on, is that one statement, or is a switch case ended by ``break`` (how every
    case ends, not what it decides)."""
    if len(statements) < 2 or not _exit(statements[-1]):
        return None
    if kind in ("case", "default") and statements[-1].type == "break_statement":
        return None
    return statements[-1]


def _exit(node: tree_sitter.Node) -> str:
    return {"return_statement": "return", "raise_statement": "raise", "throw_statement": "raise",
            "break_statement": "break", "continue_statement": "continue"}.get(node.type, "")


def _walk(node: tree_sitter.Node | None) -> list[tree_sitter.Node]:
    if node is None:
        return []
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type in _FUNCTIONS and n is not node:
            continue  # a lambda's insides are its own
        out.append(n)
        stack.extend(reversed(n.children))
    return out


def _last_name(reader: _Reader, target: tree_sitter.Node | None) -> str:
    if target is None:
        return ""
    if target.type in ("attribute", "member_expression"):
        target = target.child_by_field_name("attribute") or target.child_by_field_name("property")
    return reader.text(target) if target is not None and target.type in _VALUE_NAMES else ""


def _unparen(text: str) -> str:
    return text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text


def _cut(text: str, limit: int = CODE_CHARS) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["Decision", "decisions"]
