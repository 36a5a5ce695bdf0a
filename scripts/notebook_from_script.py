"""Writes a Jupyter notebook (nbformat 4) from a script whose cells start with "# %%" lines:
"# %% [markdown]" cells become markdown (their "# " prefixes removed), the others code cells
(the "# %%" line itself, a title, kept as the cell's first comment). Used for
examples/tour.ipynb from examples/tour.py; the test python_notebook checks that the two agree.
Usage: python3 scripts/notebook_from_script.py examples/tour.py examples/tour.ipynb"""
import json
import sys


def cells_of(text):
    """[(kind, source lines)] of a script; the lines before the first cell are dropped."""
    cells, cur = [], None
    for line in text.splitlines():
        if line.startswith("# %%"):
            kind = "markdown" if line.startswith("# %% [markdown]") else "code"
            cur = (kind, [] if kind == "markdown" else ["#" + line[4:]])
            cells.append(cur)
        elif cur is not None:
            cur[1].append(line[2:] if cur[0] == "markdown" and line.startswith("# ") else
                          "" if cur[0] == "markdown" and line == "#" else line)
    out = []
    for kind, lines in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        out.append((kind, lines))
    return out


def notebook(text):
    cells = []
    for kind, lines in cells_of(text):
        source = [ln + "\n" for ln in lines[:-1]] + lines[-1:]
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                          "name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        nb = notebook(f.read())
    with open(sys.argv[2], "w") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")
