#!/usr/bin/env python3
"""Compare a golden output with its recorded version, value for value (tests/golden/run.sh).

Usage: compare.py EXPECTED ACTUAL [RULE ...]
       compare.py --spread FILE1 FILE2 ...   (largest relative difference of every value that
                                              differs between the files: to derive a tolerance)

A golden file is a list of sections ("---- NAME"): a CSV section is its header line and its
data rows, the "json" section holds "key = value" lines. Both files must have the same
sections, headers, keys and number of rows. Every value is compared as text, byte for byte,
unless a RULE names its key (a CSV column name or a flattened JSON key, fnmatch pattern):

    PATTERN:rtol=R        |a - b| <= R * max(|a|, |b|)
    PATTERN:atol=A        |a - b| <= A
    PATTERN:rtol=R,atol=A either bound suffices
    (plus, for rtol and atol, one unit of the last printed digit: two values within the
    bound may round to neighbouring printed numbers)
    PATTERN:count=R       an integer count of work (ODE solves) within R relative

The first rule whose pattern matches is used (the catch-all `*` after all others); both values must then be numbers. Rules come
from the case's third field in tests/golden/cases.txt, where each is justified.
Exit status: 0 equal (within the rules), 1 different (the differences on stdout), 2 misuse.
"""
import fnmatch
import math
import sys


def sections(path):
    out, name = {}, None
    order = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("---- "):
                name = line[5:]
                out[name] = []
                order.append(name)
            elif name is not None:
                out[name].append(line)
    return order, out


def values(name, lines):
    """(key, value, where) of every value of a section; the header/keys as a structure."""
    vals = []
    if name == "json":
        keys = []
        for i, line in enumerate(lines):
            k, _, v = line.partition(" = ")
            keys.append(k)
            vals.append((k, v, f"{k}"))
        return tuple(keys), vals
    if not lines:
        return (), vals
    head = lines[0].split(",")
    for r, row in enumerate(lines[1:], start=1):
        cells = row.split(",")
        for c, cell in enumerate(cells):
            key = head[c] if c < len(head) else f"column{c + 1}"
            vals.append((key, cell, f"row {r} {key}"))
    return (lines[0], len(lines)), vals


def parse_rules(args):
    rules = []
    for a in args:
        pat, sep, spec = a.rpartition(":")
        if not sep:
            pat, spec = "*", a
        bounds = {}
        for part in spec.split(","):
            k, eq, v = part.partition("=")
            if not eq or k not in ("rtol", "atol", "count"):
                sys.exit(f"compare.py: bad rule '{a}' (PATTERN:rtol=R, :atol=A or :count=R)")
            bounds[k] = float(v)
        rules.append((pat, bounds))
    return sorted(rules, key=lambda r: r[0] == "*")


def number(s):
    try:
        x = float(s.strip().strip('"'))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def last_digit(s):
    """One unit of the last printed digit of s ("0.5122157011" -> 1e-10, "2.6e-26" -> 1e-27)."""
    m, _, e = s.strip().strip('"').lower().partition("e")
    decimals = len(m.partition(".")[2])
    return 10.0 ** ((int(e) if e else 0) - decimals)


def within(a, b, bounds):
    x, y = number(a), number(b)
    if x is None or y is None:
        return False
    d = abs(x - y)
    if "count" in bounds:
        return x == int(x) and y == int(y) and d <= bounds["count"] * max(abs(x), abs(y))
    # two numbers within the bound may round to neighbouring printed values
    d -= max(last_digit(a), last_digit(b))
    ok = d <= 0
    if "rtol" in bounds:
        ok = ok or d <= bounds["rtol"] * max(abs(x), abs(y))
    if "atol" in bounds:
        ok = ok or d <= bounds["atol"]
    return ok


def compare(exp, act, rules):
    eo, es = sections(exp)
    ao, as_ = sections(act)
    if eo != ao:
        return [f"sections differ: {eo} recorded, {ao} now"]
    bad = []
    for name in eo:
        ks, ev = values(name, es[name])
        ka, av = values(name, as_[name])
        if ks != ka:
            bad.append(f"{name}: header, keys or row count differ")
            continue
        for (key, a, where), (_, b, _) in zip(ev, av):
            if a == b:
                continue
            rule = next((bd for pat, bd in rules if fnmatch.fnmatchcase(key, pat)), None)
            if rule is None:
                bad.append(f"{name}: {where}: {a} recorded, {b} now (compared bit for bit)")
            elif not within(a, b, rule):
                bad.append(f"{name}: {where}: {a} recorded, {b} now (outside {rule})")
    return bad


def spread(paths):
    """Largest relative difference per (section, key) across the files."""
    base_o, base = sections(paths[0])
    worst = {}
    for p in paths[1:]:
        o, s = sections(p)
        if o != base_o:
            sys.exit(f"compare.py: {p}: other sections")
        for name in o:
            _, ev = values(name, base[name])
            _, av = values(name, s[name])
            for (key, a, _), (_, b, _) in zip(ev, av):
                if a == b:
                    continue
                x, y = number(a), number(b)
                if x is None or y is None:
                    r = math.inf
                else:
                    r = abs(x - y) / max(abs(x), abs(y))
                k = (name, key)
                worst[k] = max(worst.get(k, 0.0), r)
    for (name, key), r in sorted(worst.items(), key=lambda t: -t[1]):
        print(f"{r:10.3g}  {name}: {key}")


def main(argv):
    if len(argv) >= 2 and argv[1] == "--spread":
        spread(argv[2:])
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    bad = compare(argv[1], argv[2], parse_rules(argv[3:]))
    for line in bad[:12]:
        print("    " + line)
    if len(bad) > 12:
        print(f"    ... and {len(bad) - 12} more")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
