"""The deliberation team: domain coordinators run specialists over your exports, conflicts
between their insights go to a four-round debate with a moderator, other agents vote on
insights, and Python adjusts confidence and ranks the result.

See docs/deliberation.md.
"""

from __future__ import annotations
