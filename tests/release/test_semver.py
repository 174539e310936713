"""The version rule over generated change counts: a fix an audit decided never asks for more than a patch (a
minor with tasks added), any other change or removal asks for a major, and `check_bump` refuses exactly the
versions below what the changes need, naming the least version that would do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curation.core.errors import UsageError
from curation.release.semver import LEVELS, Version, check_bump, required_level

counts = st.integers(min_value=0, max_value=50)
versions = st.builds(Version, st.integers(0, 9), st.integers(0, 9), st.integers(0, 9))


@given(counts, counts, counts, st.data())
def test_fixes_are_patches_and_other_changes_majors(added, removed, changed, data):
    fixed = data.draw(st.integers(min_value=0, max_value=removed + changed))
    level = required_level(added, removed, changed, fixed)
    if removed + changed == fixed:  # every change a fix: nothing a score on the parent meant has moved
        assert level == ("minor" if added else "patch")
    else:
        assert level == "major"
    if fixed:  # a fix counted as an ordinary change never lowers what the release needs
        assert LEVELS.index(required_level(added, removed, changed, fixed - 1)) >= LEVELS.index(level)


@given(versions, counts, counts, counts, st.data())
def test_check_bump_refuses_exactly_the_versions_below_the_need(parent, added, removed, changed, data):
    fixed = data.draw(st.integers(min_value=0, max_value=removed + changed))
    need = required_level(added, removed, changed, fixed)
    for level in LEVELS:
        version = parent.bumped(level)
        if LEVELS.index(level) >= LEVELS.index(need):
            check_bump(parent, version, added, removed, changed, fixed)
        else:
            with pytest.raises(UsageError, match=f"at least {parent.bumped(need)}, not {version}"):
                check_bump(parent, version, added, removed, changed, fixed)
