"""collector_paused: the cyclic collector is off inside, and left as it was found."""

import gc

import pytest

from fulcrum.collector import collector_paused


@pytest.fixture
def collector():
    enabled = gc.isenabled()
    yield
    gc.enable() if enabled else gc.disable()


def test_the_collector_is_off_inside_and_on_again_after(collector):
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it as it found it
    assert gc.isenabled()


def test_blocks_that_overlap_in_two_threads_keep_it_off_until_the_last_ends(collector):
    gc.enable()
    first, second = collector_paused(), collector_paused()
    first.__enter__()  # a console's poll freezing...
    second.__enter__()  # ...when a publish starts
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the publish still runs without it
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_an_error_inside_turns_it_on_again(collector):
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("refused")
    assert gc.isenabled()


def test_a_collector_off_before_stays_off(collector):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_a_publish_runs_without_it(collector, monkeypatch, db):
    from revisions import publish

    seen = []
    real = publish.render_for_nodes
    monkeypatch.setattr(publish, "render_for_nodes", lambda *a: (seen.append(gc.isenabled()), real(*a))[1])
    gc.enable()
    publish.publish(None, "first", force=True)
    assert seen == [False] and gc.isenabled()
