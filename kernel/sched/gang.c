/*
 * gang.c - gang scheduling with an Ousterhout matrix switched by broadcast interrupts, as Feitelson and
 * Rudolph built it on Makbilan (1992, section 3.2).
 *
 * The matrix. Rows are slots, columns are harts (slots.h allocates rows with capacity lists, first or
 * best fit: gangfit=). A job's processes are its gang; a gang of n <= H processes takes n entries of one
 * row. A job with more processes than harts is split into parts of H processes (the last part takes the
 * remainder), each part a gang of its own in its own row: the job is coscheduled part by part. Entries
 * are reserved when the job is admitted, before its processes exist (Makbilan's spawn descriptors); a
 * process takes its entry when created and keeps its column (hart) for life - it never migrates. A
 * part's entries are given back when all its processes have exited (or at the job's end for processes
 * never created); allocation is static, rows are never merged.
 *
 * The slot switch. Only hart 0 has a quantum timer (one_timer). When it fires, hart 0 moves cur_slot to
 * the next used row (round robin, rows with nothing runnable skipped), sends one broadcast IPI to the
 * other harts and acts on the switch itself; every hart, in its IPI handler (gang_ack), leaves a process
 * that is not its entry of the new slot, and its scheduler loop then dispatches the entry.
 *
 * The idle mask. One bit per hart, set while the hart has nothing of the current slot to run (no entry,
 * or its entry blocked or exited). The hart whose bit completes the mask switches early, with the same
 * broadcast. A process of the current slot that blocks sets its bit; woken within the slot it clears
 * the bit and runs again at once for the rest of the quantum.
 *
 * Alternates (alternates=on, Ousterhout's alternate selection). A hart with nothing of the current slot
 * to run may run a runnable process of another row in its own column, until the next switch or until
 * its own entry of the current slot becomes runnable.
 *
 * What it promises, for schedlab check (tools/py/schedlab/check/declare.py):
 * schedlab check:
 *   work-conserving  no - a hart with nothing in the current row idles (alternates=off)
 *   share            none - rows share time equally, the jobs of a row do not
 *   invariants       coscheduled
 *
 * All state below is guarded by sched_lock (every hook runs with it held).
 */
#include "sched.h"
#include "slots.h"

#define OPTIONS(X)                                                                                      \
    X(alternates, .choices = "off|on", .help = "a hart idle in the current slot runs a process of another slot") \
    X(gangfit, .choices = "first|best", .help = "slot allocation: first fit or best fit")
SCHED_OPTIONS(OPTIONS);

struct gang_part {
    int row;
    uint64_t cols; /* the part's columns (harts), one per process, in process order */
    int left;      /* processes of the part not yet exited (created or not) */
};

struct gang_job {
    int nparts;
    struct gang_part part[SL_MAX_PROCS];
};

static struct slot_table table;
static struct proc *matrix[SLOTS_MAX_ROWS][SL_MAX_HARTS]; /* the entries' processes (NULL: none yet) */
static struct gang_job gjobs[NJOB];
static int cur_slot = -1;  /* the slot running now; -1 before any */
static uint64_t idle_mask; /* harts with nothing of cur_slot to run */
static uint64_t all_harts;
static uint64_t switch_seq;              /* slot switches so far */
static uint64_t acked_seq[SL_MAX_HARTS]; /* the last switch each hart acted on */

static void gang_init(void)
{
    slots_init(&table, ncpus, SCHED_OPT(gangfit) == 1 ? SLOT_FIT_BEST : SLOT_FIT_FIRST);
    all_harts = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
    idle_mask = all_harts;
}

static int runnable(const struct proc *p) { return p && (p->state == P_READY || p->state == P_RUNNING); }

static int row_runnable(int row)
{
    for (int h = 0; h < ncpus; h++)
        if (runnable(matrix[row][h]))
            return 1;
    return 0;
}

/* Hart c acts on the latest switch: it leaves whatever is not its entry of the new slot. */
static void gang_ack(struct cpu *c)
{
    if (acked_seq[c->id] == switch_seq)
        return;
    acked_seq[c->id] = switch_seq;
    trace_rec(c->id, TR_ACK, 0, -1, cur_slot);
    if (c->cur && c->cur != matrix[cur_slot][c->id])
        sched_preempt(c);
}

/* Switch to the next used row that has something runnable. Returns 0 (no switch) when there is none
   other than the current one. why: TR_SLOT (quantum) or TR_EARLY (idle mask). */
static int gang_switch(enum trace_ev why)
{
    int row = cur_slot;
    for (int k = 0; k < table.nrows; k++) {
        row = slots_next_used(&table, row);
        if (row < 0 || row == cur_slot)
            return 0;
        if (row_runnable(row))
            break;
    }
    if (row < 0 || row == cur_slot || !row_runnable(row))
        return 0;
    struct cpu *me = mycpu();
    cur_slot = row;
    switch_seq++;
    idle_mask = 0;
    for (int h = 0; h < ncpus; h++)
        if (!runnable(matrix[row][h]))
            idle_mask |= 1UL << h;
    trace_rec(me->id, why, 0, -1, row);
    sched_restart_tick(0);
    sched_ipi(all_harts & ~(1UL << me->id)); /* the one broadcast */
    gang_ack(me);
    return 1;
}

/* Hart h has nothing of the current slot to run; the hart that completes the mask switches early. */
static void mark_idle(int h)
{
    idle_mask |= 1UL << h;
    if (idle_mask == all_harts)
        gang_switch(TR_EARLY);
}

static struct gang_job *gjob(struct job *j) { return &gjobs[j->id - 1]; }

static void free_part(struct gang_part *pt)
{
    slots_free(&table, pt->row, pt->cols);
    pt->left = 0;
}

static int gang_job_admit(struct job *j)
{
    struct gang_job *g = gjob(j);
    g->nparts = 0;
    for (int first = 0; first < j->nprocs; first += ncpus) {
        struct gang_part *pt = &g->part[g->nparts];
        pt->left = MIN(ncpus, j->nprocs - first);
        pt->row = slots_alloc(&table, pt->left, &pt->cols);
        if (pt->row < 0) {
            while (g->nparts > 0)
                free_part(&g->part[--g->nparts]);
            return -1;
        }
        g->nparts++;
    }
    return 0;
}

static void gang_job_done(struct job *j)
{
    struct gang_job *g = gjob(j);
    for (int k = 0; k < g->nparts; k++)
        if (g->part[k].left > 0)
            free_part(&g->part[k]); /* processes that were never created */
    g->nparts = 0;
}

/* The column of the m-th process of a part: the m-th set bit of its columns. */
static int nth_column(uint64_t cols, int m)
{
    for (int h = 0; h < ncpus; h++)
        if ((cols >> h & 1) && m-- == 0)
            return h;
    panic("gang: part has too few columns");
}

static void gang_proc_new(struct proc *p)
{
    struct gang_part *pt = &gjob(p->job)->part[p->idx / ncpus];
    p->slot = pt->row;
    p->hart = nth_column(pt->cols, p->idx % ncpus);
    matrix[p->slot][p->hart] = p;
}

static void gang_enqueue(struct proc *p, enum enq_how how)
{
    struct cpu *c = &cpus[p->hart];
    if (p->slot == cur_slot) {
        idle_mask &= ~(1UL << p->hart);
        if (c->cur && c->cur != p)
            sched_preempt(c); /* an alternate gives the hart back */
        else
            sched_kick(p->hart);
        return;
    }
    if (how != ENQ_NEW && how != ENQ_WAKE)
        return; /* left at a switch: it waits for its slot */
    if (idle_mask == all_harts)
        gang_switch(TR_EARLY); /* nothing of the current slot runs anywhere */
    else if (SCHED_OPT(alternates))
        sched_kick(p->hart);
}

static struct proc *alternate(struct cpu *c)
{
    for (int k = 1; k < table.nrows; k++) {
        struct proc *p = matrix[(cur_slot + k) % table.nrows][c->id];
        if (p && p->state == P_READY)
            return p;
    }
    return 0;
}

static struct proc *gang_pick_next(struct cpu *c)
{
    for (int tries = 0; tries < 2; tries++) {
        struct proc *p = cur_slot >= 0 ? matrix[cur_slot][c->id] : 0;
        if (p && p->state == P_READY)
            return p;
        int before = cur_slot;
        mark_idle(c->id); /* may switch early */
        if (cur_slot == before)
            break;
    }
    return SCHED_OPT(alternates) && cur_slot >= 0 ? alternate(c) : 0;
}

static void gang_blocked(struct proc *p)
{
    if (p->slot == cur_slot)
        mark_idle(p->hart);
}

static void gang_exited(struct proc *p)
{
    struct gang_part *pt = &gjob(p->job)->part[p->idx / ncpus];
    matrix[p->slot][p->hart] = 0;
    if (--pt->left == 0)
        free_part(pt);
    if (p->slot == cur_slot)
        mark_idle(p->hart);
}

/* Hart 0 only (one_timer): the quantum of the current slot is over. */
static void gang_tick(struct cpu *c) { gang_switch(TR_SLOT); }

static void gang_ipi(struct cpu *c) { gang_ack(c); }

const struct sched_class gang_class = {
    .order = 2,
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .name = "gang",
    .one_timer = 1,
    .init = gang_init,
    .job_admit = gang_job_admit,
    .job_done = gang_job_done,
    .proc_new = gang_proc_new,
    .enqueue = gang_enqueue,
    .pick_next = gang_pick_next,
    .blocked = gang_blocked,
    .exited = gang_exited,
    .abandoned = gang_exited, /* proc_new took its matrix entry and the part's count: exited gives it back */
    .tick = gang_tick,
    .ipi = gang_ipi,
};
SCHED_CLASS(gang_class);
