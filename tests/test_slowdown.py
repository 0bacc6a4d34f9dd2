"""Slowdown counts the wait: a job's time in a comparison runs from its arrival, not from its
first dispatch, and the wait is reported beside it."""

from schedlab import comparison, console, qemu, stats
from schedlab.comparison import ALONE, MIX, Trial, response_us, wait_us
from schedlab import mix
from schedlab.table import SLOWDOWN_HEADER, comparison_table


def _result(job, app, arrive, start, end):
    return {"job": job, "app": app, "arrive_us": arrive, "start_us": start, "end_us": end,
            "elapsed_us": end - start, "check": "ok"}


def _run(results, makespan):
    return qemu.Run(cpus=2, bootargs="", argv=[], console="", exit_code=0, timed_out=False,
                    parsed=console.Console(results=results, summary={"makespan_us": makespan}))


def test_response_time_runs_from_arrival():
    r = _result(1, "synth", 0, 8000, 16200)
    assert response_us(r) == 16200 and wait_us(r) == 8000 and r["elapsed_us"] == 8200
    assert response_us({"elapsed_us": 5}) == 5 and wait_us({"elapsed_us": 5}) is None     # no arrival: elapsed


def test_two_gangs_that_take_turns_are_both_slowed():
    """The new user's case: two 8 ms jobs under gang on 8 harts. Each runs in its own quantum, so the second
    waits the first's out: its slowdown is about 2, not the 1.00 that timing from the first dispatch gave."""
    _s, jobs = mix.split_tokens(["job=synth", "job=synth"])
    done = []
    for r in range(2):
        for job in jobs:
            done.append((Trial("gang", ALONE, r, (), job), _run([_result(1, "synth", 0, 0, 8000)], 8000)))
        done.append((Trial("gang", MIX, r, ()), _run([_result(1, "synth", 0, 0, 8000),
                                                        _result(2, "synth", 0, 8100, 16200)], 16200)))
    (gang,) = comparison.aggregate(done, jobs, ["gang"], repeats=2)
    first, second = gang.jobs
    assert first.slowdown.median == 1.0
    assert second.slowdown.median == stats.Spread.of([16200 / 8000] * 2).median
    assert second.wait.median == 8100 and first.wait.median == 0
    as_dict = comparison.outcomes_to_dict([gang])
    assert as_dict["policies"][0]["jobs"][1]["wait_us"]["median"] == 8100
    assert "arrive_us" in as_dict["definitions"]["alone_us, mix_us"]
    table = comparison_table([gang])
    assert table.startswith(SLOWDOWN_HEADER) and "from the job's arrival" in SLOWDOWN_HEADER
    assert "mix wait ms" in table and "mix resp ms" in table


def test_reproduce_times_from_arrival_when_asked():
    from types import SimpleNamespace
    from schedlab import reproduce as rp
    run = SimpleNamespace(results=[_result(1, "gauss", 0, 10000, 30000)])
    assert rp.elapsed_us(run, "gauss", key="response_us") == 30000
    assert rp.elapsed_us(run, "gauss") == 20000
