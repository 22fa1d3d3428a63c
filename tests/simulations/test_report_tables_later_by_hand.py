"""The report tables of the simulations published after the first batch (issue 41), on datasets made by hand.

Like ``test_report_tables_by_hand.py``: each ``tables(ds)`` gets a small
dataset whose numbers are known, so that every count of seeds and every
paired margin is checked against a value worked out by hand.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.report_tables import render
from neurosim.simulations import osdl_hierarchical


def _values(c):
    return c["values"]


def test_hierarchical_tables_average_each_depth_then_count_seeds():
    # a tree of 1 + 2 units: depth 0 (unit 0), depth 1 (units 1, 2); two seeds
    freq = np.array([[0.10, 0.20, 0.30], [0.30, 0.20, 0.20]])  # depth 1 mean: 0.25, 0.20
    usage = np.array([[0.9, 0.5, 0.7], [0.8, 0.9, 0.9]])  # falls on seed 0 only (0.9 > 0.6; 0.8 < 0.9)
    ds = xr.Dataset({"frequency": (("seed", "unit"), freq), "usage": (("seed", "unit"), usage),
                     "depth": ("unit", [0, 1, 1]), "parent": ("unit", [-1, 0, 0]),
                     "violations": ("seed", [0.0, 0.004]), "relative_error": ("seed", [0.3, 0.5])},
                    coords={"seed": [0, 1], "unit": [0, 1, 2]})
    depths, claims = osdl_hierarchical.tables(ds)
    shown = render(depths).splitlines()
    assert shown[2] == "| 0 (root) | 0.200 ± 0.141 | 0.100, 0.300 | 0.850 ± 0.071 | 0.900, 0.800 |"
    assert shown[3] == "| 1 (leaves) | 0.225 ± 0.035 | 0.250, 0.200 | 0.750 ± 0.212 | 0.600, 0.900 |"
    assert _values(claims.rows[0][1]) == {"k": 1, "n": 2}  # usage falls on seed 0 only
    assert _values(claims.rows[1][1])["k"] == 1  # leaves finer than the root: +0.15 on seed 0, -0.10 on seed 1
    assert _values(claims.rows[1][1])["mean"] == pytest.approx(0.025)
    assert len(claims.rows) == 4  # with two levels, no separate depth-1-against-root row
    assert render(claims).splitlines()[-2].endswith("| 1/2: 0.200 ± 0.283 | 0.000, 0.400 |")  # violations in %
    assert _values(claims.rows[3][1])["mean"] == pytest.approx(0.4)
