"""An answer's "if / when / unless" statements are held to the conditions quoted from the code:
one that reads what a quoted condition reads is kept, one that matches a condition the code has
gets it quoted, and one that matches none is removed with a verdict saying why."""

from __future__ import annotations

from moot.teams.research.codelines import CodeLine
from moot.teams.research.conditions import asks_how, check_conditions, condition_clause, conditions_section
from moot.teams.research.verifier import revise

SEE_OTHER = CodeLine(path="web/redirects.py", line=8, text='if status == SEE_OTHER and method != "HEAD":', then='method = "GET"',
                     then_line=9, symbol="web.redirects.next_method", kind="if",
                     words='When `status` equals `SEE_OTHER` and `method` is not `"HEAD"`, it sets `method` to `"GET"`.')
CROSS_ORIGIN = CodeLine(path="web/redirects.py", line=20, text="if not same_origin(url, request.url):",
                        then='headers.pop("Authorization", None)', then_line=21, symbol="web.redirects.build_headers", kind="if",
                        words="When `same_origin(url, request.url)` is false, it calls `headers.pop`.")
POP = CodeLine(path="web/redirects.py", line=21, text='headers.pop("Authorization", None)', symbol="web.redirects.build_headers")


def test_a_statement_resting_on_a_quoted_condition_is_kept() -> None:
    answer = "The method becomes GET when the status is SEE_OTHER (web/redirects.py:8)."
    verdicts, removed, added = check_conditions(answer, [SEE_OTHER], [SEE_OTHER])
    assert [v.status for v in verdicts] == ["VERIFIED"] and verdicts[0].citation == "web/redirects.py:8-9"
    assert removed == {} and added == []


def test_an_unquoted_condition_is_refused_and_removed() -> None:
    invented = "The request is retried when the server sends a Retry-After header."
    answer = f"The method becomes GET when the status is SEE_OTHER (web/redirects.py:8). {invented}"
    verdicts, removed, added = check_conditions(answer, [SEE_OTHER, POP], [SEE_OTHER, POP])
    refused = [v for v in verdicts if v.status == "CORRECTED"]
    assert [v.claim for v in refused] == [invented] and refused[0].method == "condition"
    assert "not among the conditions quoted from the code" in refused[0].correction
    revised = revise(answer, removed)
    assert "Retry-After" not in revised and "SEE_OTHER" in revised and added == []


def test_a_condition_the_code_has_but_was_not_chosen_gets_quoted() -> None:
    answer = "The Authorization header is dropped unless the redirect stays on the same origin."
    verdicts, removed, added = check_conditions(answer, [SEE_OTHER], [SEE_OTHER, CROSS_ORIGIN])
    assert [v.status for v in verdicts] == ["VERIFIED"] and removed == {}
    assert added == [CROSS_ORIGIN]
    section = conditions_section([SEE_OTHER], added)
    # each condition in words, then where, then the code verbatim; the added one is marked
    assert "When `status` equals `SEE_OTHER`" in section and "web/redirects.py:8-9" in section
    assert "`if not same_origin(url, request.url):` → `headers.pop(\"Authorization\", None)` (quoted for a statement" in section


def test_conditional_clauses_and_how_questions_are_read_by_their_connectives() -> None:
    assert condition_clause("It raises ValueError when the status is missing, and stops.") == "the status is missing"
    assert condition_clause("It returns the method (web/redirects.py:8).") is None
    assert asks_how("What happens to the method on a 303 redirect?") and asks_how("When does it give up?")
    assert not asks_how("Where is the redirect method defined?")
