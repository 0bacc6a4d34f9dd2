#!/usr/bin/env python3
"""The layer check: a tree's file-level call graph, read from its objects, against its layer spec.

    python3 tools/layers.py SPEC OBJDIR [--nm NM] [--name TARGET] [--root DIR] [--graph] [--report]

SPEC is a small text file in the tree's top directory (lib/LAYERS): one line per layer, lowest first,

    <layer> <path> [<path> ...]      # comments and blank lines are ignored

each path a folder (ending in /) or a file, relative to the spec's directory (or --root); "./" is the whole
tree. SPEC may also be a directory: the tree, as one layer (with --graph --report, a listing of a tree that
has no spec yet: `make layers-kernel`). A source belongs to the
layer of the longest path that covers it. OBJDIR holds the tree's objects as the build makes them, one per
source at the source's relative path (lib/wait/wait.c -> OBJDIR/wait/wait.o); NM is the nm that reads them
(riscv64-unknown-elf-nm for the kernel target, nm for the host). An object whose source no longer exists
(left behind by a move) is skipped.

The graph: file A calls file B when A's object has an undefined symbol that B's object defines (a call
or a reference to B's data: both tie A to B). Symbols no object of the tree defines (the app's main, libc,
another tree's) are not edges.

The check fails (exit status 1), printing one line per problem:
  - an upward call: "<caller> (<layer>) calls <symbol> in <callee> (<higher layer>)";
  - a cycle across layers (a set of files that reach each other and span more than one layer; without
    an upward call there can be none, but the check does not rely on that);
  - a source in no layer of the spec.
Calls within a layer may go either way; their cycles are listed with --graph, never an error.
--graph prints the graph (caller -> callee: symbols) and its cycles first. --report prints the problems
but exits 0 (a tree still being untangled: a listing, not a gate). The same tool serves any tree whose
build puts objects beside its sources' relative paths (kernel/ with a kernel/LAYERS some day).
"""
import argparse
import collections
import os
import subprocess
import sys

SOURCE_EXTS = (".c", ".S", ".s")
# nm letters of a global definition (text, data, bss, read-only, small data/bss, common, weak, indirect);
# lower-case t, d, b... are a file's static symbols, which no other file can reach
DEFINED = set("TDBRGSCVWi")


def read_spec(path):
    """[(layer, [relative path, ...]), ...], lowest layer first; a directory is one layer."""
    if os.path.isdir(path):
        return [(os.path.basename(os.path.abspath(path)), ["./"])]
    layers = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) < 2:
                sys.exit(f"{path}:{n}: a layer line is '<layer> <path> [<path> ...]', got '{' '.join(line)}'")
            if any(line[0] == name for name, _ in layers):
                sys.exit(f"{path}:{n}: layer {line[0]} appears twice")
            layers.append((line[0], line[1:]))
    if not layers:
        sys.exit(f"{path}: no layers")
    return layers


def layer_of(rel, layers):
    """(index, name) of the layer whose longest path covers source rel, or None."""
    best = None
    for i, (name, paths) in enumerate(layers):
        for p in paths:
            if p in (".", "./"):
                hit = True          # the whole tree: the least specific path there is
            else:
                hit = rel.startswith(p) if p.endswith("/") else rel == p
            length = 0 if p in (".", "./") else len(p)
            if hit and (best is None or length > best[0]):
                best = (length, i, name)
    return best and best[1:]


def source_of(root, rel_obj):
    """The tree's source for object rel_obj (wait/wait.o -> wait/wait.c), or None if it is gone."""
    stem = rel_obj[:-2]
    for ext in SOURCE_EXTS:
        if os.path.isfile(os.path.join(root, stem + ext)):
            return stem + ext
    return None


def symbols(nm, obj):
    """(defined, undefined) global symbol sets of one object."""
    out = subprocess.run([nm, obj], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{nm} {obj} failed: {out.stderr.strip()}")
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("U", "w", "v"):
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in DEFINED:
            defined.add(f[2])
    return defined, undefined


def graph(root, objdir, nm):
    """{source: {callee source: sorted symbols}} and the sources seen, from the objects under objdir."""
    syms = {}
    for dirpath, _, files in os.walk(objdir):
        for fn in sorted(files):
            if not fn.endswith(".o"):
                continue
            rel_obj = os.path.relpath(os.path.join(dirpath, fn), objdir).replace(os.sep, "/")
            src = source_of(root, rel_obj)
            if src:
                syms[src] = symbols(nm, os.path.join(dirpath, fn))
    if not syms:
        sys.exit(f"no objects of {root}/ under {objdir}: build them first (make, make host)")
    definer = collections.defaultdict(set)
    for src, (defined, _) in syms.items():
        for s in defined:
            definer[s].add(src)
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for src, (_, undefined) in syms.items():
        for s in undefined:
            for callee in definer.get(s, ()):
                if callee != src:
                    edges[src][callee].add(s)
    return edges, sorted(syms)


def sccs(nodes, edges):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check(spec, objdir, nm, name, show_graph=False, out=sys.stdout, root=None):
    """Print the problems (and with show_graph the graph); return how many there are."""
    layers = read_spec(spec)
    if root is None:
        root = spec if os.path.isdir(spec) else os.path.dirname(os.path.abspath(spec))
    root = os.path.abspath(root)
    tree = os.path.relpath(root)
    edges, nodes = graph(root, objdir, nm)
    where = {n: layer_of(n, layers) for n in nodes}
    label = f"{tree}/ ({name})" if name else f"{tree}/"
    problems = []
    for n in nodes:
        if where[n] is None:
            problems.append(f"{tree}/{n} is in no layer of {spec}: add its folder or name to a layer there")
    for caller in nodes:
        for callee, syms in sorted(edges.get(caller, {}).items()):
            a, b = where[caller], where[callee]
            if a and b and b[0] > a[0]:
                problems.append(f"upward call: {tree}/{caller} ({a[1]}) calls {', '.join(sorted(syms))} "
                                f"in {tree}/{callee} ({b[1]}): a layer calls only the layers below it "
                                f"({' -> '.join(l for l, _ in layers)})")
    cycles = sccs(nodes, edges)
    for comp in cycles:
        spanned = sorted({where[n][1] for n in comp if where[n]})
        if len(spanned) > 1:
            problems.append(f"cycle across layers {', '.join(spanned)}: " + ", ".join(f"{tree}/{n}" for n in comp))
    if show_graph:
        print(f"# {label}: {len(nodes)} files, {sum(len(v) for v in edges.values())} file-to-file edges", file=out)
        for caller in nodes:
            for callee, syms in sorted(edges.get(caller, {}).items()):
                lc, le = where[caller], where[callee]
                print(f"{caller} [{lc[1] if lc else '?'}] -> {callee} [{le[1] if le else '?'}]: "
                      f"{', '.join(sorted(syms))}", file=out)
        print(f"# cycles (files that reach each other): {len(cycles)}", file=out)
        for comp in cycles:
            print(f"cycle of {len(comp)}: {' '.join(comp)}", file=out)
    for p in problems:
        print(f"layers: {label}: {p}", file=out)
    if not problems:
        print(f"layers: {label}: {len(nodes)} files in {len(layers)} layers, every call downward or within "
              f"a layer", file=out)
    return len(problems)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", help="the tree's layer spec, e.g. lib/LAYERS")
    ap.add_argument("objdir", help="where the build put the tree's objects, e.g. build/u/lib")
    ap.add_argument("--nm", default="nm", help="the nm for these objects (default nm)")
    ap.add_argument("--name", default="", help="the target's name in messages (kernel, host)")
    ap.add_argument("--root", help="the tree's top directory (default: the spec's directory)")
    ap.add_argument("--graph", action="store_true", help="print the call graph and its cycles")
    ap.add_argument("--report", action="store_true", help="list the problems but exit 0")
    args = ap.parse_args(argv)
    n = check(args.spec, args.objdir, args.nm, args.name, args.graph, root=args.root)
    return 0 if args.report or n == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
