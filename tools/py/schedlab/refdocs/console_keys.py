"""What each key of the console contract's lines means: the words of the generated reference/results.md.

The keys themselves are not listed here: refdocs takes them from a boot's own BOOT, CALIB, RESULT and
SUMMARY lines (the kernel's formatter, kernel/contract.c and kernel/calib.c) and from the RESULT keys the kernel
keeps for itself (kernel/resultkeys.h). Only their meanings are written by hand, and the generator refuses to
write the page when a key it found has none here (or a meaning here names a key no line has): a key added to
the formatter must be explained before the docs build again.
"""

BOOT = {
    "harts": "harts this boot runs on (QEMU -smp)",
    "nodes": "NUMA nodes of the machine (the device tree's; 1 without -numa)",
    "mem_mb": "memory the kernel found, MiB",
    "policies": "the policies built into this kernel, in their order (the first is the default)",
    "apps": "the apps embedded in this kernel",
    "boot_hart": "the hart that booted",
    "boot_us": "microseconds from reset to this line",
    "background": "apps that run until every foreground job has ended (never run alone by the harness)",
    "options": "every policy's options: policy.option=choices or =min..max",
    "timer": "how the kernel arms its timer: sstc (the stimecmp CSR) or sbi (through OpenSBI)",
    "ipi": "how the kernel sends IPIs: sswi (ACLINT SSWI) or sbi (through OpenSBI)",
    "clock": "real, or virtual in deterministic mode (times count instructions)",
    "jobkeys": "every policy's per-job keys, as options= lists options; none when no policy has any",
    "idle": "what an idle hart does: auto (polls, then halts) or poll",
    "model": "the machine model's canonical spec, or none",
    "cycle_ps": "the machine model's cycle in picoseconds (0 without a model)",
    "checks": "on when the kernel was built with KCHECKS (lock order and the policy contract checked)",
}

CALIB = {
    "syscall_ns": "a trap into the kernel and sret back, with the register save and restore every trap does",
    "switch_ns": "one kernel context switch on one hart",
    "ipi_ns": "an IPI to another hart until it answered through memory (na with one hart)",
    "tick_ns": "arming the timer for now, its interrupt pending, disarming it",
    "synth_unit_ns": "one work unit of synth (its loop body)",
    "cost_us": "what measuring the card took, before t0",
}

RESULT = {
    "job": "the job's id: its place among the scenario's job= tokens, from 1",
    "app": "the app it ran",
    "policy": "the policy of the run",
    "harts": "harts of the run",
    "procs": "the job's processes (procs=)",
    "arrive_us": "when the job was admitted (its at=), after t0",
    "start_us": "when its first process was first dispatched",
    "end_us": "when its last process ended",
    "elapsed_us": "end_us - start_us: what slowdowns are computed from",
    "cpu_us": "processor time all its processes got",
    "check": "ok only if the app verified its own answer; FAIL with reason= otherwise",
    "reason": "why a job failed: a fault, exit-status-N, deadlock, memory-limit, no-result, app-check...",
    "switches": "dispatches of its processes",
    "preempts": "quantum preemptions of its processes",
    "blocks": "times one of its processes blocked on a futex",
    "blocked_us": "time its processes spent blocked",
    "adapt": "yes when the job follows its allotment under partition (adapt=)",
    "migrations": "times the policy moved one of its processes to another hart",
    "mem_kb": "memory the job took while it ran, counted against its limit (mem=)",
    "gang_us": "policy=adaptive: time the job spent in the gang regime",
    "part_us": "policy=adaptive: time in the partition regime",
    "fill_us": "policy=adaptive: time in the fill regime",
    "regime_moves": "policy=adaptive: how often the job moved between regimes",
    "regime": "policy=adaptive: the job's last regime",
}

SUMMARY = {
    "policy": "the policy of the run",
    "harts": "harts of the run",
    "jobs": "jobs that ended",
    "failed": "jobs whose check was not ok",
    "makespan_us": "from t0 to the last job's end",
}

LINES = {"BOOT": BOOT, "CALIB": CALIB, "RESULT": RESULT, "SUMMARY": SUMMARY}
