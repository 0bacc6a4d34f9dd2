"""The report card: a terminal table (check x topology: pass / FAIL / not declared / not run), the same as
JSON (``--json``), and a Markdown page with an HTML twin (``--out DIR``: card.md, card.html, baseline.png) that
adds each failure's detail and replay line and the separating mixes' baseline plot (matplotlib).

Exit status (``exit_code``): 0 when every check passed where it was judged; otherwise the code of the first
failing class in this order - the most basic property first, since a boot that breaks its contract can
show anything else: 3 contract, 4 progress, 5 work-conservation, 6 fairness, 7 invariants. 2 is a usage or
build problem (cli.py's), 1 a grading below the rubric's pass mark (rubric.py).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from .battery import CHECKS
from .run import Card

EXIT = {"contract": 3, "progress": 4, "work-conservation": 5, "fairness": 6, "invariants": 7}
SHOWN = {"pass": "pass", "fail": "FAIL", "not-declared": "n/d", "not-run": "-"}


def exit_code(card: Card) -> int:
    failed = card.failed()
    return EXIT[failed[0]] if failed else 0


def table(card: Card) -> str:
    names = [t.name for t in card.topologies]
    width = max(len(c) for c in CHECKS) + 2
    cols = [max(len(n), 5) for n in names]
    lines = [f"check {card.policy}: " + ("PASS" if not card.failed() else "FAIL " + ", ".join(card.failed())),
             "".ljust(width) + "  ".join(n.ljust(w) for n, w in zip(names, cols))]
    for check in CHECKS:
        cells = [SHOWN[card.cell(check, n).status].ljust(w) for n, w in zip(names, cols)]
        lines.append(check.ljust(width) + "  ".join(cells))
    lines.append("pass: judged and held; FAIL: see the replay lines; n/d: not declared by the policy; -: not run")
    lines += [f"note: {n}" for n in card.notes]
    return "\n".join(lines)


def as_json(card: Card) -> dict:
    return {
        "policy": card.policy, "declaration": card.decl.as_dict(),
        "kernel": str(card.target.kernel), "simulator": str(card.target.sim) if card.target.sim else None,
        "topologies": [t.__dict__ for t in card.topologies], "boots": card.boots,
        "cells": [{"check": c, "topology": t, **cell.__dict__} for (c, t), cell in sorted(card.cells.items())],
        "failed": card.failed(), "exit": exit_code(card), "notes": card.notes, "baseline": card.baseline,
    }


def write_json(card: Card, path: str) -> None:
    Path(path).write_text(json.dumps(as_json(card), indent=1, default=str) + "\n")


def plot(card: Card, path: Path) -> bool:
    """The baseline's mean slowdown per mix and policy, the checked policy drawn apart; False without data."""
    rows = [r for r in card.baseline.get("rows", []) if r["mean"] is not None]
    if not rows:
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        card.notes.append("no baseline plot: matplotlib is missing (make deps installs it)")
        return False
    groups = sorted({(r["mix"], r["engine"], r["harts"]) for r in rows}, key=str)
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups)), 3.6))
    step = 0.8 / len(policies)
    for k, policy in enumerate(policies):
        means = {(r["mix"], r["engine"], r["harts"]): r["mean"] for r in rows if r["policy"] == policy}
        xs = [i + k * step for i, g in enumerate(groups) if g in means]
        ax.bar(xs, [means[g] for g in groups if g in means], step, label=policy,
               hatch="//" if policy == card.policy else None, edgecolor="black" if policy == card.policy else None)
    ax.set_xticks([i + 0.4 - step / 2 for i in range(len(groups))])
    ax.set_xticklabels([f"{m}\n{e} {h} harts" for m, e, h in groups], fontsize=8)
    ax.set_ylabel("mean slowdown (mix / alone)")
    ax.set_title(f"separating mixes: {card.policy} (hatched) beside the build's policies - not judged")
    ax.legend(fontsize=7, ncol=min(len(policies), 6))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def markdown(card: Card, have_plot: bool) -> str:
    names = [t.name for t in card.topologies]
    out = [f"# Report card: {card.policy}", "",
           f"Verdict: **{'PASS' if not card.failed() else 'FAIL: ' + ', '.join(card.failed())}** "
           f"({card.boots} boots; exit {exit_code(card)}).", "",
           "Declared: " + ", ".join(f"{k}={v}" for k, v in card.decl.as_dict().items() if k not in ("policy",)), "",
           "| check | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for check in CHECKS:
        out.append(f"| {check} | " + " | ".join(SHOWN[card.cell(check, n).status] for n in names) + " |")
    failures = [(k, c) for k, c in sorted(card.cells.items()) if c.status == "fail"]
    if failures:
        out += ["", "## Failures", ""]
        for (check, topo), cell in failures:
            out += [f"- **{check}** on {topo} ({cell.case}): {cell.detail}", f"  replay: `{cell.replay}`",
                    f"  boot: `{cell.boot}`"]
    out += ["", "## Separating mixes (baseline, not judged)", ""]
    rows = card.baseline.get("rows", [])
    if rows:
        out += ["| mix | where | policy | slowdowns per job | mean |", "|---|---|---|---|---|"]
        for r in rows:
            mark = " **(checked)**" if r["policy"] == card.policy else ""
            out.append(f"| {r['mix']} | {r['engine']} {r['harts']} harts | {r['policy']}{mark} | "
                       f"{', '.join('-' if s is None else f'{s:.2f}' for s in r['slowdowns'])} | "
                       f"{'-' if r['mean'] is None else format(r['mean'], '.2f')} |")
        if have_plot:
            out += ["", "![baseline](baseline.png)"]
    else:
        out.append(card.baseline.get("note") or "not run")
    out += [""] + [f"Note: {n}" for n in card.notes]
    return "\n".join(out) + "\n"


def to_html(text: str, title: str) -> str:
    """The Markdown page as plain HTML (tables, headings, lists, code): no converter needed."""
    body, rows = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not set(line) <= set("|-"):
                cells = [html.escape(c.strip()).replace("**", "") for c in line.strip("|").split("|")]
                tag = "th" if not rows else "td"
                rows.append("<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
            continue
        if rows:
            body.append("<table border=1 cellpadding=3>" + "".join(rows) + "</table>")
            rows = []
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.startswith("!["):
            body.append('<img src="baseline.png" alt="baseline">')
        elif line.strip():
            text_ = html.escape(line.strip()).replace("**", "")
            body.append(f"<p><code>{text_}</code></p>" if "`" in line else f"<p>{text_}</p>")
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>" \
           + "\n".join(body) + "</body></html>\n"


def write_pages(card: Card, out: str) -> Path:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    have_plot = plot(card, folder / "baseline.png")
    text = markdown(card, have_plot)
    (folder / "card.md").write_text(text)
    (folder / "card.html").write_text(to_html(text, f"report card: {card.policy}"))
    return folder
