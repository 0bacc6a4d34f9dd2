/*
 * plugin.h - what the two halves of the machine-model plugin share: plugin.c (the memory model's glue: accesses,
 * translation, calibration, the report, the arguments) and paced.c (pacing: counting instructions, checking each
 * hart's schedule, sleeping). Not part of the plugin's interface (tools/model/README.md is).
 *
 * A struct vcpu is touched only by its vCPU's host thread while QEMU runs, and by the report after it stopped.
 */
#ifndef MODEL_PLUGIN_H
#define MODEL_PLUGIN_H

#include <stdint.h>
#include <time.h>

#include "qemu_api.h"
#include "pace.h"
#include "schedlab/model.h"
#include "cache.h"

#define VTLB_SIZE     256                 /* per vCPU, direct mapped, 4 KiB pages */

struct vtlb_entry {
    uint64_t vpage, ppage;                /* vpage ~0: empty */
};

struct jobstat {
    uint64_t served[SERVED_REMOTE + 1], stall_cycles;   /* accesses: their sum */
    uint64_t insns;                                     /* paced: instructions the job's processes executed */
    struct pace_count pace;                             /* paced: fidelity events while it ran */
};

struct vcpu {
    struct vtlb_entry tlb[VTLB_SIZE];
    int job;                              /* the job whose process this vCPU runs; 0 = none */
    int64_t debt_ps;                      /* stall owed and not yet waited; negative = waited too long */
    uint64_t paid_ns;                     /* stall actually waited */
    uint64_t calib_t0;                    /* host ns at the calibration loop's start */
    struct pace_hart pace;                /* paced: this hart's model time */
    uint64_t last_event_ns;               /* paced: host ns of its last fidelity event */
    struct jobstat stat[MODEL_MARKS];
} __attribute__((aligned(64)));

extern struct vcpu *vcpus;
extern int nvcpus;
extern uint64_t cycle_ps;                 /* a cycle: measured (unpaced) or 1/R (paced) */
extern struct pace pace;                  /* pace.rate 0: unpaced */

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000UL + (uint64_t)ts.tv_nsec;
}

/* paced.c */
int pace_install(uint64_t start_at, uint64_t mark_lo, uint64_t mark_hi, char *err, size_t errlen);
void pace_instrument(struct qemu_plugin_tb *tb);  /* translation: count the block's instructions */
void pace_point(unsigned int vcpu, uint64_t lead_ns); /* check the schedule; sleep while ahead */
void pace_fold(unsigned int vcpu);                /* gathered instructions into the hart's and job's counts */
void on_pace_start(unsigned int vcpu, void *udata); /* model_pace_start's first instruction */
void on_idle(qemu_plugin_id_t id, unsigned int vcpu);
void pace_stop(void);                             /* the report: pacing's span ends */
int pace_report(char *buf, size_t len);           /* MODEL end's pace keys */

#endif
