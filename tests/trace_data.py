"""Hand-written TRACE and ULOG dumps that the trace, Perfetto, event-log and malformed-console tests share.

Most use a 1 MHz timebase so that ticks are microseconds and the expected numbers can be checked on paper;
the comment above each trace draws what happens on each hart.
"""


def dump(blocks, harts=2, hz=1_000_000, policy="gang", quantum_us=1000, dropped=None, end=True):
    """A TRACE dump: ``blocks`` maps hart -> records as "<ticks> <event> <job> <proc> <arg>"."""
    lines = [f"TRACE begin harts={harts} timebase_hz={hz} policy={policy} quantum_us={quantum_us}"]
    for hart, records in blocks.items():
        lines.append(f"TRACE hart={hart} records={len(records)} dropped={(dropped or {}).get(hart, 0)}")
        lines += [f"T {hart} {record}" for record in records]
    if end:
        lines.append("TRACE end")
    return "\n".join(lines) + "\n"


# Three slot switches.  t=1000 (quantum, hart 0, to row 1): hart 0 acks at 1002 and
# dispatches at 1006, hart 1 acks at 1010 and dispatches at 1020.  t=1500 (early,
# hart 1, to row 0): acks 1503/1501, entries 1505/1502.  t=2000 (quantum, hart 0):
# hart 0 acks at 2001 and keeps running, hart 1 never acks.
SWITCHES = {
    0: ["0 run 1 0 0", "1000 slot 0 -1 1", "1002 ack 0 -1 1", "1004 pre 1 0 0", "1006 run 2 0 1",
        "1400 blk 2 0 0", "1401 idle 0 -1 0", "1503 ack 0 -1 0", "1505 run 1 0 0", "1700 rep 1 0 2",
        "2000 slot 0 -1 1", "2001 ack 0 -1 1"],
    1: ["0 run 1 1 0", "1010 ack 0 -1 1", "1011 pre 1 1 0", "1020 run 2 1 1", "1450 blk 2 1 0",
        "1451 idle 0 -1 0", "1500 early 0 -1 0", "1501 ack 0 -1 0", "1502 run 1 1 0"],
}

# Gang: job 1 in row 0, job 2 in row 1, one process of each per hart; both harts
# switch together at 1000 (window 1000..1005) and at 2000 (window 2000..2004).
COSCHEDULED = {
    0: ["0 new 1 0 0", "0 new 1 1 1", "0 new 2 0 0", "0 new 2 1 1", "1 run 1 0 0",
        "1000 slot 0 -1 1", "1000 ack 0 -1 1", "1001 pre 1 0 0", "1002 run 2 0 1",
        "2002 ack 0 -1 0", "2003 pre 2 0 0", "2004 run 1 0 0", "2500 exit 1 0 0", "2501 idle 0 -1 0"],
    1: ["1 run 1 1 0", "1003 ack 0 -1 1", "1004 pre 1 1 0", "1005 run 2 1 1",
        "2000 slot 0 -1 0", "2000 ack 0 -1 0", "2001 pre 2 1 0", "2002 run 1 1 0",
        "2500 exit 1 1 0", "2501 idle 0 -1 0"],
}

# Timeslice, uncoordinated: hart 0 runs 1.0 then 2.0 (switch at 1000); hart 1 runs
# 2.1, 1.1, 2.1 (switches at 500 and 1500).  Each job's processes mostly take turns.
TIMESLICE = {
    0: ["0 new 1 0 0", "0 new 1 1 1", "0 new 2 0 0", "0 new 2 1 1", "0 run 1 0 -1",
        "1000 pre 1 0 0", "1000 run 2 0 -1", "2000 pre 2 0 0"],
    1: ["0 run 2 1 -1", "500 pre 2 1 0", "500 run 1 1 -1", "1500 pre 1 1 0", "1500 run 2 1 -1",
        "2000 pre 2 1 0"],
}


LOG = ("OpenSBI v1.1\nBOOT harts=2 nodes=1 mem_mb=256 policies=timeslice,gang apps=gauss,oddeven boot_us=9\n"
       + dump(COSCHEDULED)
       + "RESULT job=1 app=gauss policy=gang harts=2 procs=2 arrive_us=0 start_us=1 end_us=2500 "
         "elapsed_us=2499 cpu_us=2997 check=ok\n"
       + "SUMMARY policy=gang harts=2 jobs=2 failed=0 makespan_us=2501\n")


def ulog_block(blocks, now=1000, end=True, off=()):
    """A ULOG dump: ``blocks`` maps (job, proc) -> records as "<ticks> <event> <arg> <aux>"."""
    lines = [f"ULOG begin jobs=1 now={now}"] + [f"ULOG job={j} off=no-room" for j in off]
    for (job, proc), records in blocks.items():
        lines.append(f"ULOG job={job} proc={proc} records={len(records)} dropped=0")
        lines += [f"U {job} {proc} {r}" for r in records]
    return "\n".join(lines + (["ULOG end"] if end else [])) + "\n"


NESTED = {(1, 0): ["10 arrive 0 1", "12 block 5 0", "40 unblock 5 0", "41 release 0 1", "50 steal 1 0",
                   "60 arrive 0 1"],
          (1, 1): ["5 release 1 1", "20 grab 16 1", "30 mark 7 0"]}
