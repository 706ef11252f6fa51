"""The Table 2 runner end to end on a short stream: the report, its saved results, regeneration."""
import json
from pathlib import Path

import numpy as np

from fastomkl.cli import main


def test_reproduce_003_writes_report_and_results(tmp_path):
    out = tmp_path / "paper003_table2.md"
    code = main(["reproduce", "003", "--datasets", "AR(4)", "Airfoil", "--methods", "VAW²",
                 "VAW-EWA", "Raker", "--seeds", "0", "1", "--samples", "300", "--quiet",
                 "--no-figures", "--out", str(tmp_path)])
    assert code == 0
    text = out.read_text()
    assert "## AR(4)" in text and "## Airfoil" in text and "quick run" in text.splitlines()[0]
    saved = json.loads(out.with_suffix(".json").read_text())
    keys = set(saved["results"])
    assert keys == {f"{d}|{m}|{mode}" for d in ("AR(4)", "Airfoil")
                    for m, modes in (("VAW²", ("ridge", "vaw")), ("VAW-EWA", ("ridge", "vaw")),
                                     ("Raker", ("ridge",))) for mode in modes}
    for values in saved["results"].values():
        assert len(values) == 2 and np.isfinite(values).all() and min(values) > 0
    # the saved per-seed results regenerate the same report
    again = tmp_path / "again" / "paper003_table2.md"
    assert main(["reproduce", "003", "--report-only", str(out.with_suffix(".json")),
                 "--out", str(again.parent)]) == 0
    assert again.read_text() == text


COMMITTED = Path(__file__).resolve().parents[1] / "bench" / "results"


def test_committed_table_is_the_report_of_its_numbers_and_names_its_commit(tmp_path):
    """bench/results/paper003_table2.md is what the report writes from the committed per-seed
    numbers (its verdicts computed, none hand-written), and records the command and commit."""
    saved = json.loads((COMMITTED / "paper003_table2.json").read_text())
    assert saved["origin"].startswith("Command: `fastomkl reproduce 003")
    assert "at commit `" in saved["origin"] and "uncommitted" not in saved["origin"]
    assert main(["reproduce", "003", "--report-only", str(COMMITTED / "paper003_table2.json"),
                 "--out", str(tmp_path)]) == 0
    assert ((tmp_path / "paper003_table2.md").read_text()
            == (COMMITTED / "paper003_table2.md").read_text())


def test_a_short_run_repeats_the_committed_cells(tmp_path):
    """Seed 0 of AR(4) (Raker and VAW² in ridge mode) gives the committed run's seed-0 MSEs: the
    committed table is the current code's."""
    saved = json.loads((COMMITTED / "paper003_table2.json").read_text())
    assert main(["reproduce", "003", "--datasets", "AR(4)", "--methods", "Raker", "VAW²",
                 "--seeds", "0", "--modes", "ridge", "--quiet", "--no-figures",
                 "--out", str(tmp_path)]) == 0
    mine = json.loads((tmp_path / "paper003_table2.json").read_text())["results"]
    assert set(mine) == {"AR(4)|Raker|ridge", "AR(4)|VAW²|ridge"}
    for key, values in mine.items():
        np.testing.assert_allclose(values[0], saved["results"][key][0], rtol=1e-12, err_msg=key)


def test_spread_test_of_the_cells():
    from fastomkl.reproduce.paper003 import DATASETS, PAPER, cells
    j = DATASETS.index("AR(4)")
    paper = PAPER["Raker"][j]
    near = np.array([paper - 0.1, paper + 0.1]) / 1e3      # sd 0.141: bound 0.283
    far = np.array([paper + 0.5, paper + 0.7]) / 1e3       # difference 0.6 > bound 0.283
    table = cells({("AR(4)", "Raker", "ridge"): near, ("AR(4)", "VAW²", "ridge"): far,
                   ("AR(4)", "VAW²", "vaw"): near}, ["AR(4)"])
    assert [(c["method"], c["within"]) for c in table] == [("Raker", True), ("VAW²", False)]
    assert np.isclose(table[0]["bound"], 2 * np.std(near * 1e3, ddof=1), rtol=1e-12)
