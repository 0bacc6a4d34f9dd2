"""What several sections share: alone-vs-mix slowdowns over seeds, the measured constants, plots."""

from __future__ import annotations

from . import Ctx, ReproError, elapsed_us, median


def slowdowns(ctx: Ctx, alone: str, mix: str, app: str, key: str = "par_us", n: int | None = None,
              cpus: int | None = None, mixes: list | None = None) -> tuple[list[float], list[float], list[float]]:
    """(alone values, mix values, per-seed mix/alone) of app's RESULT key; the same seed for both of a pair.
    The mixed runs are appended to `mixes` when given (for their other RESULT keys)."""
    a_vals, m_vals, ratios = [], [], []
    for seed in range(1, (n or ctx.reps(5, 2)) + 1):
        a = elapsed_us(ctx.boot(alone, seed, cpus), app, key=key)
        run = ctx.boot(mix, seed, cpus)
        if mixes is not None:
            mixes.append(run)
        m = elapsed_us(run, app, key=key)
        a_vals.append(a)
        m_vals.append(m)
        ratios.append(m / a)
    return a_vals, m_vals, ratios


def constants(ctx: Ctx) -> dict:
    """The machine's costs in us, from the calibration card (CALIB) of a boot: a same-hart switch, a syscall,
    a cross-hart IPI, a timer tick; and a block/wake hand-off (kbench futex on one hart: two switches and the
    futex calls), measured here."""
    if ctx.calib is None:
        ctx.boot("job=synth:iters=10")
    card = ctx.calib or {}
    if not card:
        raise ReproError("no CALIB line in the boots (boot with calib=on, the default)")
    futex = [elapsed_us(ctx.boot("job=kbench:what=futex,procs=2,ops=5000", seed, cpus=1), "kbench", key="ns_per_op")
             for seed in (1, 2, 3)]
    return {"switch_us": card["switch_ns"] / 1000, "syscall_us": card["syscall_ns"] / 1000,
            "ipi_us": card["ipi_ns"] / 1000, "tick_us": card["tick_ns"] / 1000,
            "unit_us": card["synth_unit_ns"] / 1000, "block_wake_us": median(futex) / 1000}


def plot(ctx: Ctx, name: str, draw) -> str | None:
    """draw(ax) into <name>.png in ctx.figdir (copied to docs/figures/ with the results); the file name, or None
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    draw(ax)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    ctx.figdir.mkdir(parents=True, exist_ok=True)
    path = ctx.figdir / f"{name}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name
