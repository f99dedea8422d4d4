"""The pure keyset planner: windows, directions and the cursors around a page."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from django_snowid.core.keyset import PageRequest, page_cursors, window_of

cursor = st.none() | st.integers(0, 60)


@given(st.integers(1, 10), cursor, cursor, cursor, cursor, st.sets(st.integers(0, 60)))
def test_the_window_and_cursors_match_a_sorted_list(limit, max_id, since_id, min_id, top, keys):
    request = PageRequest(limit, max_id, since_id, min_id, top)
    window = window_of(request)
    inside = sorted(
        k
        for k in keys
        if all(k < b for b in (max_id, top) if b is not None)
        and all(k > b for b in (since_id, min_id) if b is not None)
    )
    read = inside[:limit] if window.ascending else inside[::-1][:limit]
    page = sorted(read, reverse=True)
    cursors = page_cursors(request, page, more_beyond=len(inside) > limit)
    if page:
        assert cursors.newer == page[0]
        more_older = window.ascending or len(inside) > limit
        assert cursors.older == (page[-1] if more_older else None)
    else:
        assert cursors.older is None


def test_an_empty_page_at_the_top_polls_from_just_below_the_settled_id():
    assert page_cursors(PageRequest(5, settled=100), [], more_beyond=False).newer == 99
    assert page_cursors(PageRequest(5, min_id=40, settled=100), [], more_beyond=False).newer == 40
    assert page_cursors(PageRequest(5, max_id=50, settled=100), [], more_beyond=False).newer is None
    assert page_cursors(PageRequest(5), [], more_beyond=False).newer is None


def test_min_id_reads_ascending_and_every_bound_applies():
    window = window_of(PageRequest(5, max_id=90, since_id=10, min_id=20, settled=80))
    assert (window.low, window.high, window.ascending) == (20, 80, True)
