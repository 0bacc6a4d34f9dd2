"""Tucker & Gupta's point 4 in its simplest form: two jobs whose working sets each fit a hart's caches but not
together, time-sliced on one hart, against each on its own hart - with and without the machine model.

    schedlab experiment cache-corruption [--model iris] [--kb 640] [--passes 40] [--repeat 3]

Two memwalk jobs (one process each, kb KiB each, every line of it read `passes` times). Per setting, the median
over --repeat boots (seeds 1..R) of each job's elapsed time, its slowdown against the same job alone in the same
setting (same harts, same model), and under the model its misses per quantum it held the hart (misses over
its dispatches). Settings: `timeslice` at 1 hart (the jobs alternate every quantum, each reloading what the
other evicted) and `partition` at 2 harts (one hart each: no corruption). Without the model both slowdowns
are the share of the processor a job got (about 2 time-sliced, about 1 partitioned); with it the time-sliced
one adds the reloads. Measure on an idle host.
"""
from __future__ import annotations

import argparse
import statistics
import sys

from .. import qemu


def job(kb, passes, stride):
    return f"job=memwalk:kb={kb},passes={passes},stride={stride},procs=1"


def measure(cpus, policy, jobs, model, seed):
    run = qemu.boot(cpus, f"seed={seed} policy={policy} " + " ".join(jobs), model=model)
    if not run.ok:
        sys.exit(f"failed ({policy}, {model}):\n{run.console[-1500:]}")
    out = []
    for r in sorted(run.results, key=lambda r: r["job"]):
        m = run.parsed.model_jobs.get(r["job"], {})
        out.append((r["elapsed_us"], r["switches"], m.get("misses"), m.get("stall_us")))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab experiment cache-corruption", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="iris")
    ap.add_argument("--kb", type=int, default=640, help="each job's working set (KiB)")
    ap.add_argument("--passes", type=int, default=400, help="passes over the working set: enough for several quanta")
    ap.add_argument("--stride", type=int, default=16, help="bytes between the words read: the profile's line")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    one = job(args.kb, args.passes, args.stride)
    print(f"# two jobs of {args.kb} KiB, {args.passes} passes, stride {args.stride}; median of {args.repeat} "
          f"boots; slowdown = in the pair / alone, same setting")
    print(f"{'setting':22} {'model':8} {'alone ms':>9} {'pair ms':>9} {'slowdown':>9} {'misses/quantum':>15} "
          f"{'stall ms':>9}")
    for policy, cpus in (("timeslice", 1), ("partition", 2)):
        for model in (None, args.model):
            alone, pair, per_q, stall = [], [], [], []
            for seed in range(1, args.repeat + 1):
                a = measure(cpus, policy, [one], model, seed)[0]
                p = measure(cpus, policy, [one, one], model, seed)
                alone.append(a[0])
                pair.append(statistics.mean(x[0] for x in p))
                if model:
                    per_q.append(statistics.mean(x[2] / max(x[1], 1) for x in p))
                    stall.append(statistics.mean(x[3] for x in p) / 1000)
            a, p = statistics.median(alone), statistics.median(pair)
            q = f"{statistics.median(per_q):15.0f}" if per_q else f"{'-':>15}"
            s = f"{statistics.median(stall):9.1f}" if stall else f"{'-':>9}"
            print(f"{policy + f' at {cpus} hart' + ('s' if cpus > 1 else ''):22} {model or 'none':8} "
                  f"{a / 1000:9.1f} {p / 1000:9.1f} {p / a:9.2f} {q} {s}   "
                  f"(spread {min(pair) / 1000:.1f}..{max(pair) / 1000:.1f} ms)", flush=True)


if __name__ == "__main__":
    main()
