"""The scenarios ``schedlab explore`` draws (explore.py runs and judges them).

Boot i of a campaign with seed S draws from random.Random(S * 1000003 + i), so a campaign is a pure function of
its seed and of the build (its policies, apps and wait kinds). Three classes:

- any: 1 to 3 foreground jobs of the build's apps that ``SIZES`` knows, each with a wait kind and a barrier
  shape where the app takes them, 1 to harts + 2 processes, staggered arrivals, sometimes a hog beside;
- the spinning mix (``MIX_SHARE``): Tucker & Gupta's gauss, synth and oddeven as wide as the harts, busy-waiting,
  staggered, under a migrating policy - every process's exit may race another hart's scheduler for it;
- process-control churn (``PROCCTL_SHARE``): one or two worker jobs wider than the harts (harts + 1 or 2
  processes) under a policy that allots harts, so process control suspends and resumes their processes
  (lib/threads/procctl.c), mostly with the adaptive wait kind and the combination shape, while short
  one-process jobs arrive one after another and leave, each arrival shrinking the wide jobs' allotments and
  each departure growing them again (tests/test_workers.py's churn) - the class in which a suspension, the
  hand-off of the suspended process's workers to its hosts, a barrier's sleep and its release interleave.

Cost. A boot's host time follows its virtual time, and an oversubscribed busy-waiting job pays up to a quantum
per phase (the collapse the papers measure; in deterministic mode also a hand-over of the host thread at every
spin pause), for no more interleavings: every phase repeats the same race. So sizes shrink with the square of
the processes per hart, both ends of a range (down to its floor: ``{r:lo-hi/floor}``), and a boot with such a
job draws every size at its floor's end (``MIN_SCALE``) and its quantum from the two shorter ones. A job that
process control folds is not oversubscribed (its processes follow the allotment): the churn class keeps its
sizes.
"""

from __future__ import annotations

import random
import re

#: Small sizes of the apps the explorer draws (a boot of a few ms of virtual time): app -> (keys, takes
#: barrier= and shape=). ``{r:lo-hi}`` draws from lo..hi, ``{r:lo-hi/f}`` too but shrinks down to f under
#: load; ``{c:a|b}`` picks one. An app of the build not here is left out, and the summary names it.
SIZES = {
    "synth": ("iters={r:20-80/8},grain={r:200-3000},var={r:0-500}", True),
    "oddeven": ("n={r:32-256/12}", True),
    "gauss": ("n={r:24-48/12},variant={c:coarse|fine},sync={c:barrier|cond}", True),
    "sor": ("n={r:16-48/12},iters={r:2-6}", True),
    "tclosure": ("n={r:16-48/12}", True),
    "adjoint": ("n={r:8-24}", True),
    "knary": ("h={r:2-5},d={r:2-4},work={r:50-400}", False),
    "msort": ("n={r:256-4096},variant={c:coarse|fine}", False),
    "grassfire": ("n={r:16-48},variant={c:coarse|fine}", False),
    "sleeper": ("iters={r:3-20},sleep_us={r:50-800},work={r:100-2000}", False),
}
SHAPES = ("central", "tree", "combination")
QUANTA = ("200us", "1ms", "3ms")
#: Each scenario's own watchdog (timeout=, virtual time): a drawn boot takes milliseconds of virtual time, so
#: one still running at 5 s is stuck. Harts stuck handing over to one another advance the clock far slower
#: than a computing hart, so the watchdog must come within --timeout's host seconds for the boot to end as an
#: ERROR with its replay line rather than as SLOW (the figures: docs/notes/explorer.md).
VIRTUAL_TIMEOUT = "timeout=5s"
MIX = ("gauss", "synth", "oddeven")             # the spinning mix (Tucker & Gupta 1989's applications)
MIX_SHARE = 0.3                                 # of the boots: the mix under a migrating policy
MIGRATING = ("global", "partition")             # policies that move a process between harts
PROCCTL = ("oddeven", "synth", "gauss")         # worker apps that adapt (tests/test_workers.py's)
PROCCTL_SHARE = 0.25                            # of the boots: process-control churn
ALLOTTING = ("partition", "adaptive")           # policies that allot harts (so process control runs)
CHURN = "synth:procs=1,iters={r:10-60},grain={r:200-800},barrier=block"
MIN_SCALE = 0.1                                 # sizes shrink with the load down to this share of their range
HOSTILE = {"chaos", "fault", "scribble"}        # their own failures are the point: not drawn here
CLASSES = ("any", "mix", "churn")


def fill(template: str, rng: random.Random, scale: float = 1.0) -> str:
    """The template's {r:lo-hi} drawn from lo..lo + (hi - lo) * scale; {r:lo-hi/f} from s*lo..s*hi, never
    below f (s = scale); its {c:a|b} from the choices."""
    def one(match):
        kind, arg = match.group(1), match.group(2)
        if kind == "c":
            return rng.choice(arg.split("|"))
        span, _, floor = arg.partition("/")
        lo, hi = (int(x) for x in span.split("-"))
        if floor:
            f = int(floor)
            return str(rng.randint(max(f, round(lo * scale)), max(f, round(hi * scale))))
        return str(rng.randint(lo, lo + round((hi - lo) * scale)))
    return re.sub(r"\{([rc]):([^}]+)\}", one, template)


def procs_of(keys: list[str]) -> int:
    return int(next(k for k in keys if k.startswith("procs=")).split("=")[1])


def draw(index: int, seed: int, policies, apps, background, waits, harts_choices, only: str | None = None) -> dict:
    """Boot `index`'s scenario: harts, tokens (with perturb=), model, class (CLASSES); a pure function of its
    arguments. `only`: every boot of that class (the same draws otherwise)."""
    rng = random.Random(seed * 1000003 + index)
    harts = rng.choice(harts_choices)
    drawable = [a for a in apps if a in SIZES and a not in background and a not in HOSTILE]
    mix = [a for a in MIX if a in drawable]
    adapting = [a for a in PROCCTL if a in drawable]
    allotting = [p for p in ALLOTTING if p in policies]
    roll, churn = rng.random(), PROCCTL_SHARE if adapting and allotting else 0.0
    if only:
        roll = {"churn": 0.0, "mix": churn, "any": 1.0}[only]
        if (only == "churn" and not churn) or (only == "mix" and not mix):
            raise ValueError(f"the build has no {only} class (apps {','.join(apps)}, policies {','.join(policies)})")
    if roll < churn:
        return procctl_case(rng, index, harts_choices, allotting, adapting, waits)
    spinning = bool(mix) and roll < churn + MIX_SHARE
    policy = rng.choice([p for p in MIGRATING if p in policies] or policies) if spinning else rng.choice(policies)
    jobs = mix_jobs(rng, mix, harts) if spinning else []          # (app, the keys after the sizes)
    for j in range(0 if spinning else rng.randint(1, 3)):
        app = rng.choice(drawable)
        parts = [f"procs={rng.randint(1, harts + 2)}"]
        if SIZES[app][1]:
            parts += [f"barrier={rng.choice(waits)}", f"shape={rng.choice(SHAPES)}"]
        if j and rng.random() < 0.5:
            parts.append(f"at={rng.randint(0, 3000)}us")
        jobs.append((app, parts))
    hog = [f"job=hog:procs={rng.randint(1, harts)}"] if "hog" in background and rng.random() < 0.3 else []
    load = sum(procs_of(p) for _, p in jobs) + (procs_of(hog[0].split(":")[1].split(",")) if hog else 0)
    busy = load > harts and any("barrier=spin" in p for _, p in jobs)   # a phase may cost a quantum
    scale = MIN_SCALE if busy else max(min(1.0, harts / load) ** 2, MIN_SCALE)
    tokens = [f"policy={policy}", f"quantum={rng.choice(QUANTA[:2] if busy else QUANTA)}",
              f"seed={rng.randint(1, 1000)}", VIRTUAL_TIMEOUT]
    tokens += [f"job={app}:{','.join([fill(SIZES[app][0], rng, scale), *parts])}" for app, parts in jobs] + hog
    tokens.append(f"perturb={rng.randint(1, 2**31)},depth={rng.randint(1, 4)}")
    if gang_checkable(tokens, harts):
        tokens.insert(1, "trace=on")
    model = "modern" if rng.random() < (0.3 if spinning else 0.1) else None
    return {"index": index, "harts": harts, "tokens": " ".join(tokens), "model": model,
            "class": "mix" if spinning else "any"}


def mix_jobs(rng: random.Random, mix: list[str], harts: int) -> list[tuple[str, list[str]]]:
    """Tucker & Gupta's class (reproduce/markatos_partition.py's mix, small): two or three of the mix's apps,
    each as wide as the harts and busy-waiting, staggered - every process's end may race another hart's
    scheduler for it, since a migrating policy lets it run anywhere."""
    return [(app, [f"procs={harts}", "barrier=spin", *([f"at={rng.randint(0, 2000)}us"] if k else [])])
            for k, app in enumerate(rng.sample(mix, rng.randint(min(2, len(mix)), len(mix))))]


def procctl_case(rng: random.Random, index: int, harts_choices, allotting, adapting, waits) -> dict:
    """Process-control churn (the module docstring): 3-4 harts where drawable, one or two worker jobs of
    harts + 1 or 2 processes - the adaptive wait kind and the combination shape one time in two each, else
    any - the second arriving a little later, and two to four one-process jobs arriving one after another
    from the start, each gone before the next (tests/test_workers.py's churn, in microseconds)."""
    harts = rng.choice([h for h in harts_choices if 3 <= h <= 4] or list(harts_choices))
    policy = allotting[0] if len(allotting) == 1 or rng.random() < 0.75 else rng.choice(allotting[1:])
    tokens = [f"policy={policy}", f"quantum={rng.choice(QUANTA)}", f"seed={rng.randint(1, 1000)}", VIRTUAL_TIMEOUT]
    for j in range(rng.randint(1, 2)):
        app = rng.choice(adapting)
        keys = [fill(SIZES[app][0], rng, 0.5), f"procs={harts + rng.randint(1, 2)}",
                f"barrier={'adaptive' if 'adaptive' in waits and rng.random() < 0.5 else rng.choice(waits)}",
                f"shape={'combination' if rng.random() < 0.5 else rng.choice(SHAPES)}"]
        if j:
            keys.append(f"at={rng.randint(0, 1500)}us")
        tokens.append(f"job={app}:{','.join(keys)}")
    at = rng.randint(0, 800)
    for _ in range(rng.randint(2, 4)):
        tokens.append(f"job={fill(CHURN, rng)},at={at}us")
        at += rng.randint(300, 2500)
    tokens.append(f"perturb={rng.randint(1, 2**31)},depth={rng.randint(1, 4)}")
    return {"index": index, "harts": harts, "tokens": " ".join(tokens), "model": None, "class": "churn"}


def gang_checkable(tokens: list[str], harts: int) -> bool:
    """policy=gang with every job at most as wide as the harts: its trace must show each gang coscheduled."""
    procs = [int(m.group(1)) for t in tokens for m in [re.search(r"[:,]procs=(\d+)", t)] if m]
    return policy_of(" ".join(tokens)) == "gang" and bool(procs) and max(procs) <= harts


def policy_of(tokens: str) -> str:
    """The scenario's policy (the last policy= wins, as in the kernel); 'default' without one."""
    found = re.findall(r"(?:^|\s)policy=(\S+)", tokens)
    return found[-1] if found else "default"
