"""plot(): a result's risk curves drawn with matplotlib (the program draws its figures with
gnuplot; this is the Python counterpart for notebooks)."""

# the program's house colours (validate --figure): ODE, Monte Carlo, SDE
_COLOURS = {"ode": "#0072b2", "sim": "#d55e00", "sde": "#009e73"}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("hdpsgd.plot needs matplotlib, which is not installed for this "
                          "Python: apt-get install python3-matplotlib, or pip install "
                          "matplotlib") from e
    return plt


def _mc(ax, t, mean, stderr, name, label):
    ax.plot(t, mean, color=_COLOURS[name], label=label)
    ax.fill_between(t, mean - 2 * stderr, mean + 2 * stderr, color=_COLOURS[name], alpha=0.25,
                    linewidth=0)


def plot(result, *, ax=None, label=None, logy=False):
    """Draw the excess risk of an ode, sim, sde or validate result against t with matplotlib
    (the ODE as a dashed line, a Monte Carlo mean as a solid line with a band of +-2 standard
    errors) and return the Axes. ax: the Axes to draw into (default: a new figure); label
    prefixes the legend's entries; logy: a logarithmic risk axis. ImportError without
    matplotlib."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    pre = f"{label} " if label else ""
    c = getattr(result, "columns", None)
    if not isinstance(c, dict) or "t" not in c:
        raise TypeError(f"plot draws an ode, sim, sde or validate result, not "
                        f"{type(result).__name__}")
    t = c["t"]
    if "ode.risk" in c:  # validate
        ax.plot(t, c["ode.risk"], "--", color=_COLOURS["ode"], label=pre + "ODE")
        _mc(ax, t, c["sim.mean"], c["sim.stderr"], "sim", pre + "Monte Carlo")
        if "sde.mean" in c:
            _mc(ax, t, c["sde.mean"], c["sde.stderr"], "sde", pre + "SDE")
    elif "risk" in c:  # ode
        ax.plot(t, c["risk"], "--", color=_COLOURS["ode"], label=pre + "ODE")
    elif "mean" in c:  # sim or sde
        name = "sde" if result.texts.get("command") == "sde" else "sim"
        _mc(ax, t, c["mean"], c["stderr"], name,
            pre + ("SDE" if name == "sde" else "Monte Carlo"))
    else:
        raise TypeError(f"plot draws an ode, sim, sde or validate result, not "
                        f"{type(result).__name__}")
    ax.set_xlabel("t (fraction of the pass)")
    ax.set_ylabel("excess risk")
    if logy:
        ax.set_yscale("log")
    ax.legend()
    return ax
