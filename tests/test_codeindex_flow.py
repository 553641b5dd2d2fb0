"""The control flow of one definition, read with tree-sitter: the conditions that decide, what
each does, and the exits, in Python and TypeScript, stated in words from the syntax tree."""

from __future__ import annotations

from moot.codeindex import flow
from moot.codeindex.flow import decisions

PYTHON = '''def next_method(status, method):
    if status == SEE_OTHER and method != "HEAD":
        method = "GET"
    elif status is None:
        raise ValueError("no status")
    if not method:
        return "GET"
    return method


def other():
    if True:
        return 1
'''

TYPESCRIPT = '''export function isIndex(index: number, options: Options): boolean {
  if (index < options.arrayLimit && options.parseArrays) {
    return true;
  } else if (options.strict) {
    throw new RangeError("too many");
  }
  const x = options.allow ? 1 : 0;
  return false;
}
'''


def test_python_conditions_their_outcomes_and_exits() -> None:
    found = decisions("python", PYTHON, 1, 8)
    assert [(d.kind, d.line) for d in found] == [("if", 2), ("elif", 4), ("if", 6), ("return", 8)]
    first, second, third, last = found
    assert first.text == 'if status == SEE_OTHER and method != "HEAD":' and first.outcome == ((3, 'method = "GET"'),)
    assert first.literal and {"status", "method"} <= set(first.names)
    assert first.words == 'When `status` equals `SEE_OTHER` and `method` is not `"HEAD"`, it sets `method` to `"GET"`.'
    assert second.exit == "raise" and second.words == "When `status` is `None`, it raises `ValueError`."
    assert third.exit == "return" and third.words == 'When `method` is false or empty, it returns `"GET"`.'
    assert last.kind == "return" and last.condition == ""
    # only the definition asked for: the other function's branch is not among them
    assert all(d.line <= 8 for d in found)


def test_typescript_conditions_else_if_throw_and_ternary() -> None:
    found = decisions("typescript", TYPESCRIPT, 1, 9)
    assert [(d.kind, d.line) for d in found] == [("if", 2), ("elif", 4), ("ternary", 7), ("return", 8)]
    first, second, ternary, _ = found
    assert first.condition == "index < options.arrayLimit && options.parseArrays"
    assert first.outcome == ((3, "return true;"),) and first.exit == "return"
    assert first.words == ("When `index` is less than `options.arrayLimit` and `options.parseArrays` is true, "
                           "it returns `true`.")
    assert second.exit == "raise" and second.words == "When `options.strict` is true, it raises `RangeError`."
    assert ternary.words == "When `options.allow` is true, the value is `1`, otherwise `0`."


def test_a_span_without_a_function_has_no_decisions() -> None:
    assert decisions("python", "X = 1\nY = 2\n", 1, 2) == []


def test_a_branch_that_acts_and_then_leaves_says_how_it_leaves() -> None:
    python = '''def start_next(self):
    if self.paused:
        if not self.window_open:
            self.note_pause()
        return False
    if self.size == 0:
        self.emit("idle")
        self.reset()
    return True
'''
    found = decisions("python", python, 1, 9)
    assert [(d.kind, d.line) for d in found] == [("if", 2), ("if", 3), ("if", 6), ("return", 9)]  # line 5 is stated once
    paused, inner, empty, _ = found
    # what the branch decides is that it stops, not the check it makes on the way
    assert paused.words == ("When `self.paused` is true, it checks whether `self.window_open` is false or empty, "
                            "then it returns `False`.")
    assert inner.words == "When `self.window_open` is false or empty, it calls `self.note_pause()`."
    # a branch that goes on is stated whole, with no exit to tell
    assert empty.words == 'When `self.size` equals `0`, it calls `self.emit("idle")` and calls `self.reset()`.'
    typescript = '''function startNext(): boolean {
  if (this.isPaused) {
    this.notePause();
    throw new PausedError("paused");
  }
  return true;
}
'''
    first = decisions("typescript", typescript, 1, 7)[0]
    assert first.words == "When `this.isPaused` is true, it calls `this.notePause()`, then it raises `PausedError`."


def test_a_callback_written_in_place_decides_for_the_function_it_is_in() -> None:
    typescript = '''class Queue {
  async add(task, options) {
    const later = () => {
      if (options.late) {
        throw new Error("late");
      }
    };
    return new Promise((resolve, reject) => {
      this.jobs.push(async () => {
        if (this.paused) {
          return;
        }
        try {
          resolve(await task());
        } catch (error) {
          reject(error);
        }
      });
      this.sizes = this.jobs.map(job => job.big ? 2 : 1);
    });
  }
}
'''
    found = decisions("typescript", typescript, 2, 21)
    words = {d.line: d.words for d in found}
    # the promise's executor and the queued job have no definition of their own in the index:
    # what they decide is what `add` decides
    assert words[10] == "When `this.paused` is true, the callback returns."  # the job returns, not `add`
    assert words[15] == "When an error is raised, it calls `reject(error)`."
    assert words[19] == "When `job.big` is true, the value is `2`, otherwise `1`."
    # a function bound to a name is a definition of its own (the index has it): left out here
    assert 4 not in words and 5 not in words
    # a callback's own `return` is not a return of the function it is in
    mapped = decisions("typescript", "function double(items) {\n  const out = items.map(x => {\n    return x * 2;\n  });\n"
                                     "  return out;\n}\n", 1, 6)
    assert [(d.kind, d.line, d.words) for d in mapped] == [("return", 5, "It sets `out` to `items.map(x => { return x * 2; })`, then it returns `out`.")]


SWITCH = '''function pick(kind) {
  switch (kind) {
    case "a":
      this.size = 1;
      break;
  }
  while (true) {
    this.tick();
    return 2;
  }
}
'''


def test_a_case_ended_by_break_and_a_loop_without_end_are_stated_plainly() -> None:
    case, loop = decisions("typescript", SWITCH, 1, 11)[:2]
    # every case of a switch ends by `break`: that is how it ends, not what it decides
    assert case.words == 'When the value matches `"a"`, it sets `this.size` to `1`.'
    assert loop.words == ("It repeats until a `return`, `raise` or `break` leaves the loop; first it calls `this.tick()`, "
                          "then it returns `2`.")


def test_a_method_assigned_to_a_prototype_decides_for_itself_not_for_the_function_around_it() -> None:
    javascript = '''function Shelf (size) {
  if (size < 1) {
    throw new Error("empty");
  }
  Shelf.prototype.put = function put (item) {
    if (this.full) {
      return false;
    }
  };
  this.items.forEach(function (item) {
    if (item.old) {
      item.drop();
    }
  });
}
'''
    outer = {d.line for d in decisions("javascript", javascript, 1, 15)}
    assert 2 in outer and 11 in outer  # its own check and its callback's
    assert 6 not in outer  # the assigned method is a definition of its own (the index has it)
    inner = decisions("javascript", javascript, 5, 9)
    assert [(d.line, d.words) for d in inner if d.kind == "if"] == [(6, "When `this.full` is true, it returns `false`.")]


def test_a_branch_and_the_way_through_are_stated_whole() -> None:
    """What a branch does after its first line, and what the definition does when no condition
    stopped it, are in the words too: the value a counter hands out is decided by the steps
    before each `return`, not by the condition alone."""
    python = '''def next_ticket(self):
    """Hand out the next ticket number."""
    if self._spare is not None:
        number = self._spare
        self._spare = number + 1
        return number
    seen = self._load()
    if not seen:
        self._spare = 2
        return 1
    # one past the highest number handed out so far
    highest = max(seen)
    number = highest + 1
    self._spare = number + 1
    return number
'''
    found = {d.line: d for d in decisions("python", python, 1, 15)}
    assert found[3].words == ("When `self._spare` is not `None`, it sets `number` to `self._spare`, "
                              "sets `self._spare` to `number + 1`, then it returns `number`.")
    assert found[8].words == "When `seen` is false or empty, it sets `self._spare` to `2`, then it returns `1`."
    # the way through: the plain steps since the last decision (not the docstring, not `seen`)
    assert found[15].kind == "return"
    assert found[15].words == ("It sets `highest` to `max(seen)`, sets `number` to `highest + 1`, "
                               "sets `self._spare` to `number + 1`, then it returns `number`.")


def test_a_long_branch_is_cut_after_four_steps() -> None:
    typescript = "function flush(q) {\n  if (q.ready) {\n    a();\n    b();\n    c();\n    d();\n    e();\n    f();\n  }\n}\n"
    first = decisions("typescript", typescript, 1, 10)[0]
    assert first.words == "When `q.ready` is true, it calls `a()`, calls `b()`, calls `c()`, calls `d()` and 2 more steps."


def test_a_loop_in_a_branch_is_stated_by_what_it_goes_through_and_does_each_time() -> None:
    python = "def f(self, value):\n    if value:\n        for key in reversed(self.keys):\n            self.check(key)\n        return True\n    return False\n"
    assert decisions("python", python, 1, 6)[0].words == (
        "When `value` is true, it goes through each `key` in `reversed(self.keys)` and each time calls "
        "`self.check(key)`, then it returns `True`.")
    javascript = ("function f(list, opts) {\n  if (opts.all) {\n    for (let i = 0; i < list.length; i++) { use(list[i]); }\n"
                  "    for (const item of list) { seen.add(item); }\n    return list.length;\n  }\n  return 0;\n}\n")
    assert decisions("javascript", javascript, 1, 8)[0].words == (
        "When `opts.all` is true, it repeats while `i` is less than `list.length` and each time calls `use(list[i])`, "
        "goes through each `item` in `list` and each time calls `seen.add(item)`, then it returns `list.length`.")


def test_a_negated_instance_check_is_stated_as_negated() -> None:
    javascript = ("function Spindle (size) {\n  if (!(this instanceof Spindle)) {\n    return new Spindle(size)\n  }\n"
                  "  if (!(size in limits) || size instanceof Array) {\n    throw new Error('size')\n  }\n  return this\n}\n")
    words = [d.words for d in decisions("javascript", javascript, 1, 9)]
    assert words[0] == "When `this` is not an instance of `Spindle`, it returns `new Spindle(size)`."
    assert words[1] == "When `size` is not in `limits` or `size` is an instance of `Array`, it raises `Error`."


def test_conditions_joined_both_ways_keep_their_grouping_in_words() -> None:
    javascript = ("function f (a, b, c, d) {\n  if (a && b && !(c === 0 && d)) {\n    return 1\n  }\n"
                  "  if (a || (b && c) || d) {\n    return 3\n  }\n  return 0\n}\n")
    first, second, _ = (d.words for d in decisions("javascript", javascript, 1, 9))
    # without brackets, "a and b and c is not 0 or d is false" would read as (a and b and c) or d
    assert first == "When `a` is true and `b` is true, and either `c` is not `0` or `d` is false or empty, it returns `1`."
    assert second == "When `a` is true, or both `b` is true and `c` is true, or `d` is true, it returns `3`."
    python = "def f(a, b, c):\n    if (a or b) and not c:\n        return 1\n    return 0\n"
    assert decisions("python", python, 1, 4)[0].words == (
        "When either `a` is true or `b` is true, and `c` is false or empty, it returns `1`.")


def test_a_files_tree_is_parsed_once_for_its_definitions_and_anew_when_the_file_changes() -> None:
    # Ranking one question's candidates reads the decisions of every definition they come from;
    # each read parsed the whole file again (about 4x the time, bench/codeindex.py).
    source = ("def spool(x):\n    if x:\n        return 1\n    return 2\n\n\n"
              "def bobbin(y):\n    if y > 2:\n        raise ValueError(y)\n    return y\n")
    flow._parsed.cache_clear()
    assert [d.condition for d in decisions("python", source, 1, 4) if d.kind == "if"] == ["x"]
    assert [d.condition for d in decisions("python", source, 7, 10) if d.kind == "if"] == ["y > 2"]
    assert flow._parsed.cache_info().misses == 1
    edited = source.replace("y > 2", "y > 3")
    assert [d.condition for d in decisions("python", edited, 7, 10) if d.kind == "if"] == ["y > 3"]
