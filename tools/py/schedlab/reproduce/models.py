"""The papers' own models, evaluated with constants measured on this machine.

Pure functions (host-tested in tests/test_models.py against values worked by hand from the papers).
Symbols as in Feitelson & Rudolph, section 2: n threads in a gang, l threads per processor (the load),
t_p the mean compute time per iteration, t_w the mean wait for the slowest, tau_q the quantum, tau_s a
context switch, alpha the cost of blocking over a plain switch.  Times in any one unit.
"""

from __future__ import annotations

import math


def gang_spin(t_p: float, t_w: float, l: float, tau_q: float, tau_s: float) -> float:
    """Eq. (6): busy waiting under gang scheduling, time per iteration: (1 + tau_s/tau_q)(t_p + t_w) l."""
    return (1 + tau_s / tau_q) * (t_p + t_w) * l


def uncoordinated_spin(t_p: float, t_w: float, l: float, n: int, tau_q: float, tau_s: float) -> float:
    """Eq. (8): busy waiting under uncoordinated time-slicing, fine grain, time per iteration:
    (1 + tau_s/tau_q)^n (t_p + t_w) l^n, capped at (tau_q + tau_s) l (at worst an iteration costs a round)."""
    return min((1 + tau_s / tau_q) ** n * (t_p + t_w) * l ** n, (tau_q + tau_s) * l)


def uncoordinated_spin_slowdown(t_iter: float, l: float, n: int, tau_q: float, tau_s: float) -> float:
    """Eq. (8) over the dedicated machine's time per iteration t_iter (= t_p + t_w at l = 1)."""
    return uncoordinated_spin(t_iter, 0.0, l, n, tau_q, tau_s) / t_iter


def blocking(t_p: float, l: float, n: int, alpha: float, tau_s: float) -> float:
    """Eq. (12): blocking under uncoordinated scheduling when every gang blocks alike, fine grain, time per
    iteration: (1 + (n-1) alpha tau_s / (n t_p)) t_p l (the last to arrive does not block)."""
    return (1 + (n - 1) * alpha * tau_s / (n * t_p)) * t_p * l


def blocking_altruistic(t_p: float, l: float, alpha: float, tau_q: float, tau_s: float) -> float:
    """Eq. (13): a blocking gang among compute-bound gangs that never block, time per iteration:
    t_p + (l-1) tau_q + (l + alpha - 1) tau_s (about one iteration per scheduling round)."""
    return t_p + (l - 1) * tau_q + (l + alpha - 1) * tau_s


def spin_wins(t_w: float, alpha: float, tau_s: float) -> bool:
    """Eq. (15)/(16): busy waiting with gang scheduling beats blocking when t_w < alpha tau_s."""
    return t_w < alpha * tau_s


def p_m(m: int, p: int) -> int:
    """Markatos 3.6.2 (Fig. 3.7): P processors are worth P_M, the smallest z <= P with ceil(M/z) = ceil(M/P)."""
    target = math.ceil(m / p)
    return next(z for z in range(1, p + 1) if math.ceil(m / z) == target)


def tree_barrier_quanta(p: int, t: float, q: float) -> int:
    """Markatos 3.6.2: under deprivation a spinning tree barrier of P processes takes ceil(log4 P) ceil(T/Q)
    quanta (T the time between barriers, Q the quantum); a centralized one takes one quantum when T < Q/2."""
    return math.ceil(math.log(p, 4) - 1e-12) * math.ceil(t / q) if p > 1 else 0


def coscheduled_slowdown(level: int, switch_overhead: float = 0.0) -> float:
    """Markatos 3.5.2: coscheduling divides the machine in time: L applications -> L (plus switch overhead)."""
    return level * (1 + switch_overhead)


def static_cliff_speedup(p: int, h: int) -> float:
    """Hood, section 2: P equal static shares on H processors finish when the most loaded processor does:
    speedup P / ceil(P/H) (the cliff at P = H+1: from H down to (H+1)/2)."""
    return p / math.ceil(p / h)


def hood_fit(points: list[tuple[float, float, float, float, int]]) -> tuple[float, float]:
    """Hood's bound T <= c1 T1/PA + c_inf T_inf P/PA: least-squares (c1, c_inf) >= 0 over measured points
    (T, T1, T_inf, PA, P).  Two unknowns, normal equations solved directly."""
    rows = [(t1 / pa, tinf * p / pa, t) for t, t1, tinf, pa, p in points if pa > 0]
    sxx = sum(a * a for a, _, _ in rows)
    syy = sum(b * b for _, b, _ in rows)
    sxy = sum(a * b for a, b, _ in rows)
    sxt = sum(a * t for a, _, t in rows)
    syt = sum(b * t for _, b, t in rows)
    det = sxx * syy - sxy * sxy
    if abs(det) < 1e-12 * max(sxx * syy, 1e-300):
        return (sxt / sxx if sxx else 0.0), 0.0
    c1 = (sxt * syy - syt * sxy) / det
    cinf = (syt * sxx - sxt * sxy) / det
    if cinf < 0:                                   # clamp, refit c1 alone
        return sxt / sxx, 0.0
    if c1 < 0:
        return 0.0, syt / syy
    return c1, cinf


def hood_bound(t1: float, tinf: float, pa: float, p: int, c1: float = 1.0, cinf: float = 1.0) -> float:
    """T1/PA + T_inf P/PA with constants c1, c_inf (the paper: about 1)."""
    return c1 * t1 / pa + cinf * tinf * p / pa
