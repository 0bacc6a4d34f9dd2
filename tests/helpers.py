"""Assertions the test modules share (tests never import one another: they import this)."""


def assert_all_ok(run):
    """The boot ended by itself, every job verified its answer, and nothing printed ERROR or PANIC."""
    assert not run.timed_out, run.console[-2000:]
    assert not run.panics and not run.errors, run.console[-2000:]
    assert not run.parsed.job_errors(), run.parsed.job_errors()    # no app printed ERROR (sl_die) either
    assert run.exit_code == 0, run.console[-2000:]
    assert run.results and all(r["check"] == "ok" for r in run.results), run.results
    assert run.summary["failed"] == 0 and run.summary["jobs"] == len(run.results)
