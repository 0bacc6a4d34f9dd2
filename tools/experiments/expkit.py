"""What the experiment scripts share: boot a scenario that must succeed, medians and spreads."""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from schedlab_harness import qemu  # noqa: E402


def boot_ok(cpus, tokens, timeout=1800):
    """Boot once; exit the script with the console's tail if the run failed or timed out."""
    run = qemu.boot(cpus, tokens, timeout=timeout)
    if run.timed_out or run.exit_code != 0:
        sys.exit(f"run failed: {' '.join(tokens)}\n{run.console[-1500:]}")
    return run


def med(xs):
    return statistics.median(xs)


def spread(xs, fmt="{:.2f}"):
    """'min..max' of xs."""
    return f"{fmt.format(min(xs))}..{fmt.format(max(xs))}"
