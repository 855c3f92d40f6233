"""The collector policies restore the collector as they found it, even on an error."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pairbench._collector import YOUNG_COLLECTION_EVERY, no_cyclic_collection, paced_collection


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    # A failing assertion inside a block must not leave the session's collector changed.
    enabled, thresholds, frozen = gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()
    yield
    gc.enable() if enabled else gc.disable()
    gc.set_threshold(*thresholds)
    if gc.get_freeze_count() and not frozen:
        gc.unfreeze()


def test_no_cyclic_collection_pauses_the_collector_and_turns_it_back_on() -> None:
    assert gc.isenabled()
    with no_cyclic_collection():
        assert not gc.isenabled()
        with no_cyclic_collection():  # nested: the inner block leaves it off
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_no_cyclic_collection_turns_it_back_on_after_an_error() -> None:
    with pytest.raises(RuntimeError), no_cyclic_collection():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_host_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with no_cyclic_collection():
        pass
    assert not gc.isenabled()


def test_paced_collection_freezes_what_exists_and_waits_for_more_objects() -> None:
    before = gc.get_threshold()
    with paced_collection():
        assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, *before[1:])
        assert gc.get_freeze_count() > 1000  # this session's modules, out of sight
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_paced_collection_restores_after_an_error_and_leaves_a_hosts_freeze() -> None:
    before = gc.get_threshold()
    gc.freeze()  # the host's own (a pre-forking server, say)
    frozen = gc.get_freeze_count()
    with pytest.raises(RuntimeError), paced_collection():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    # Still the host's, not thawed by us (a frozen object that dies leaves the count).
    assert gc.get_freeze_count() > frozen // 2
    gc.unfreeze()
